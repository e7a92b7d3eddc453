# A usage rollup: the exact integrals of one bucket (an hour, a day or a
# calendar month, UTC) at the finest grain the reports need
# (replay/kueue/usage_rollups.h). Derived data in the `usage_rollups` column
# family (ledger/format.h); dropping it changes no answer, only its speed.
#
# An integral is nano-units x nanoseconds, a signed integer of up to 256 bits
# stored as its magnitude's bytes, big-endian, without leading zeros, and a
# sign flag. Strings repeat from bucket to bucket; RocksDB's compression
# takes the repetition.
@0xcfbb1e4bb3bcfde4;

$import "/capnp/c++.capnp".namespace("ledger::schema");

struct Integral {
  magnitude @0 :Data;
  negative @1 :Bool;
}

# Reserved and admitted quota of the workloads of one namespace in one
# ClusterQueue, charged to one (flavor, resource). Present when a workload
# held it at the bucket's start or a record touched it during the bucket.
struct ReservedEntry {
  clusterQueue @0 :Text;
  namespace @1 :Text;
  flavor @2 :Text;
  resource @3 :Text;
  reserved @4 :Integral;
  admitted @5 :Integral;
  # What the pods of these workloads held through allocated ResourceClaims,
  # in the resource's quota units, and the part beyond their charge
  # (replay/kueue/held_tracker.h). Version 1.
  held @6 :Integral;
  uncharged @7 :Integral;
}

# A ClusterQueue's nominal quota of one (flavor, resource).
struct QuotaEntry {
  clusterQueue @0 :Text;
  flavor @1 :Text;
  resource @2 :Text;
  nominal @3 :Integral;
}

struct UsageBucket {
  startNs @0 :Int64;
  endNs @1 :Int64;
  reserved @2 :List(ReservedEntry);
  quota @3 :List(QuotaEntry);
  # replay/kueue/usage_levels.h kUsageRollupVersion; 0 before held.
  version @4 :UInt32;
}

# What pods held through allocated ResourceClaims, per holder
# (replay/kueue/held_record.h): derived data beside the buckets, so that an
# integration over the log reads these instead of following every Pod and
# ResourceClaim record. Keyed by seq: the holders whose holding a record
# changed ("x"), every holder after a record ("y"), and the end of a run of
# records the changes cover ("z", with the run's first seq).
struct HeldAmount {
  resource @0 :Text;
  # A Quantity exactly: its nano-units as a 128-bit integer, and the format
  # it renders in (schema/k8s/quantity.h Format).
  nanosHigh @1 :Int64;
  nanosLow @2 :UInt64;
  format @3 :UInt8;
}

struct HeldLevel {
  workload @0 :Bool;  # a Workload "namespace/name"; else a namespace's pods of no Workload
  key @1 :Text;
  held @2 :List(HeldAmount);
}

struct HeldLevels {
  levels @0 :List(HeldLevel);
  runStartSeq @1 :UInt64;  # "z" keys only
}
