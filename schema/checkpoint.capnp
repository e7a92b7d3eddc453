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

# What the fold keeps beside the live objects so that a workload's charge can
# be computed on the cluster as it was when its quota was reserved
# (replay/charge_history.h). Versions of charge inputs that are no longer
# live are CheckpointObjects of the kind RetiredInput.
struct Reservation {
  workload @0 :Text;         # "namespace/name"
  seq @1 :UInt64;            # the record where QuotaReserved last became True
  timeNs @2 :Int64;          # that record's time
  # Reserved before the ledger saw it: first seen reserved inside a
  # snapshot's bracket (schema/observation.h), with the QuotaReserved
  # condition's lastTransitionTime.
  snapshot @3 :Bool;
  reservedAtNs @4 :Int64;
}

struct ConfigSource {
  key @0 :Text;              # the DraConfig object's key
  seq @1 :UInt64;            # the record holding its current version
  timeNs @2 :Int64;
  controllerNamespace @3 :Text;
}

struct ConfigEpoch {
  fromSeq @0 :UInt64;        # the record from which this mapping is in effect
  fromNs @1 :Int64;
  versionSeq @2 :UInt64;     # the DraConfig version in effect; 0: no mapping
  versionNs @3 :Int64;
  sourceKey @4 :Text;
  controllerRestart @5 :Bool;
}

struct ControllerPod {
  key @0 :Text;              # "namespace/name"
  running @1 :Bool;
}

struct ChargeHistory {
  reservations @0 :List(Reservation);
  configSources @1 :List(ConfigSource);
  configEpochs @2 :List(ConfigEpoch);
  controllerPods @3 :List(ControllerPod);
  controllerNamespaces @4 :List(Text);
  lastInputChange @5 :List(UInt64);  # by ObjectKind
  openSnapshotSeq @6 :UInt64;        # the Snapshot opened and not closed; 0: none
}

struct Checkpoint {
  formatVersion @0 :UInt32;  # 3: objects by reference, with the charge history
  seq @1 :UInt64;
  timeNs @2 :Int64;
  digest @3 :Data;           # ClusterState::digest() at seq
  objects @4 :List(CheckpointObject);
  chargeHistory @5 :ChargeHistory;
}
