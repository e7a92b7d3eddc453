# A checkpoint: the folded ClusterState at one seq (replay/cluster_state.h).
# Derived data, stored in the `checkpoints` column family; dropping it
# changes no answer.
@0xd4c2b7e1a0f39b5e;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ledger::schema");

using P = import "projection.capnp";

struct CheckpointObject {
  kind @0 :UInt8;
  key @1 :Text;
  seq @2 :UInt64;
  timeNs @3 :Int64;
  namespace @4 :Text;
  name @5 :Text;
  uid @6 :Text;
  objectKey @7 :Text;
  projection @8 :P.Projection;
}

struct Checkpoint {
  formatVersion @0 :UInt32;
  seq @1 :UInt64;
  timeNs @2 :Int64;
  digest @3 :Data;           # ClusterState::digest() at seq
  objects @4 :List(CheckpointObject);
}
