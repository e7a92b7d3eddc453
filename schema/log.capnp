# The raw log record: the ledger's source of truth.
#
# One LogRecord per recorded watch event. The object is kept as JSON text (with
# metadata.managedFields removed) exactly as the API server sent it; everything
# else in the ledger (projection, indexes, checkpoints) is derived from these.
@0xe7b0bfa2dfc6c8cf;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ledger::schema");

enum EventType {
  added @0;
  modified @1;
  deleted @2;
}

# What identifies the object an event is about (group/version/kind from
# apiVersion and kind; namespace empty for cluster-scoped objects).
struct ObjectIdentity {
  group @0 :Text;
  version @1 :Text;
  kind @2 :Text;
  namespace @3 :Text;
  name @4 :Text;
  uid @5 :Text;
  resourceVersion @6 :Text;
}

struct LogRecord {
  seq @0 :UInt64;
  type @1 :EventType;
  timeNs @2 :Int64;        # event time, ns since the Unix epoch (UTC)
  identity @3 :ObjectIdentity;
  objectJson @4 :Text;     # the object, managedFields removed
}
