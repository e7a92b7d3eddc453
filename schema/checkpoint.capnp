# A checkpoint: the folded ClusterState at one seq (replay/cluster_state.h).
# Derived data, stored in the `checkpoints` column family (after a SHA-256 of
# these bytes); dropping it changes no answer. Each live object is named by
# the seq of the immutable record that holds its current version; versions
# older than the checkpoint interval are read from copies (CheckpointChunk).
@0xd4c2b7e1a0f39b5e;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ledger::schema");

struct CheckpointObject {
  kind @0 :UInt8;
  key @1 :Text;
  seq @2 :UInt64;            # the record holding the object's version
  # Where to read that version: 0, from the projection family; otherwise
  # from chunk `chunk` of the checkpoint at this seq (checkpoint_objects),
  # which copied it. Older checkpoints leave both 0.
  copiedAt @3 :UInt64;
  chunk @4 :UInt32;
}

# Copies of object versions, in the checkpoint_objects family: records[i]
# holds the serialised ProjectedRecord of seqs[i] (ascending), byte for byte
# what the projection family holds for that seq.
struct CheckpointChunk {
  seqs @0 :List(UInt64);
  records @1 :List(Data);
}

struct Checkpoint {
  formatVersion @0 :UInt32;  # 2: objects by reference
  seq @1 :UInt64;
  timeNs @2 :Int64;
  digest @3 :Data;           # ClusterState::digest() at seq
  objects @4 :List(CheckpointObject);
}
