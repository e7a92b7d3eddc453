# The stored wait data beside the usage rollups (replay/kueue/wait_rollups.h):
# each whole hour's admissions with their waits, and the WaitFollower's state
# after some records, so `ledger-query waits` reads the hours a period covers
# and replays only the records at its edges. Derived data in the
# `usage_rollups` column family (ledger/format.h); dropping it changes no
# answer, only its speed.
@0xa760b8aa9c4fd392;

$import "/capnp/c++.capnp".namespace("ledger::schema");

# One admission: its groups at the record that admitted it, and its wait.
struct WaitSample {
  clusterQueue @0 :Text;  # status.admission's, else the LocalQueue's; may be empty
  namespace @1 :Text;
  localQueue @2 :Text;    # spec.queueName
  waitNs @3 :Int64;
}

# The admissions of one hour [start, start + 1h), UTC, in record order.
struct WaitHour {
  version @0 :UInt32;     # replay/kueue/wait_rollups.h kWaitRollupVersion
  originSeq @1 :UInt64;   # the first record the follower read (a cut ledger's is after 1)
  samples @2 :List(WaitSample);
}

# A live Workload as replay/kueue/wait_follower.h follows it.
struct FollowedWorkload {
  key @0 :Text;           # namespace/name
  uid @1 :Text;
  creationNs @2 :Int64;
  requeuedNs @3 :Int64;
  lostNs @4 :Int64;
  quotaReserved @5 :Bool;
  admitted @6 :Bool;
  finished @7 :Bool;
  evicted @8 :Bool;
  localQueue @9 :Text;
  clusterQueue @10 :Text;
}

struct LocalQueueTarget {
  key @0 :Text;           # namespace/name
  clusterQueue @1 :Text;
}

# The follower after one record: its workloads and LocalQueues, by key.
struct WaitState {
  version @0 :UInt32;
  originSeq @1 :UInt64;
  workloads @2 :List(FollowedWorkload);
  localQueues @3 :List(LocalQueueTarget);
}
