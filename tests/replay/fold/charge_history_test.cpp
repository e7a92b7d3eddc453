// ChargeHistory alone: reservations as Kueue sets them (QuotaReserved
// becoming True), and when a configuration change takes effect (Kueue reads
// its configuration when its controller starts).
#include "replay/fold/charge_history.h"

#include <capnp/message.h>
#include <catch2/catch.hpp>

namespace ledger::replay {
namespace {

Digest digestOf(const ChargeHistory& h) {
  Sha256 s;
  h.digestInto(s);
  return s.finish();
}

}  // namespace

TEST_CASE("ChargeHistory: a reservation is the record where QuotaReserved last became True",
          "[charge_history]") {
  ChargeHistory h;
  REQUIRE_FALSE(h.noteWorkload("ns/a", 5, 50, false));
  REQUIRE(h.reservedAt("ns/a").seq == 0);
  REQUIRE_FALSE(h.noteWorkload("ns/a", 7, 70, true));
  REQUIRE_FALSE(h.noteWorkload("ns/a", 9, 90, true));  // still reserved: the charge stays
  CHECK(h.reservedAt("ns/a").seq == 7);
  CHECK(h.reservedAt("ns/a").timeNs == 70);
  REQUIRE_FALSE(h.noteWorkload("ns/b", 8, 80, true));
  CHECK(h.oldestReservation() == 7);
  // Evicted (QuotaReserved=False): the oldest reservation moves on.
  CHECK(h.noteWorkload("ns/a", 10, 100, false));
  CHECK(h.oldestReservation() == 8);
  // Reserved again: a new charge, fixed at the new record.
  REQUIRE_FALSE(h.noteWorkload("ns/a", 12, 120, true));
  CHECK(h.reservedAt("ns/a").seq == 12);
  CHECK(h.noteWorkload("ns/b", 13, 130, false));
  CHECK(h.oldestReservation() == 12);
  CHECK(h.noteWorkload("ns/a", 14, 140, false));
  CHECK_FALSE(h.anyReservation());
}

TEST_CASE("ChargeHistory: without a Kueue controller Pod a change takes effect at its event",
          "[charge_history]") {
  ChargeHistory h;
  CHECK(h.epochs().empty());
  CHECK(h.noteConfigSource("/ConfigMap/kueue-system/kueue-manager-config", 3, 30, "kueue-system",
                           false));
  REQUIRE(h.epochs().size() == 1);
  CHECK(h.epochs().back().versionSeq == 3);
  CHECK(h.epochs().back().fromSeq == 3);
  CHECK_FALSE(h.epochs().back().controllerRestart);
  CHECK(h.noteConfigSource("/ConfigMap/kueue-system/kueue-manager-config", 6, 60, "kueue-system",
                           false));
  // No reservation: only the epoch in effect is kept.
  REQUIRE(h.epochs().size() == 1);
  CHECK(h.epochs().back().versionSeq == 6);
  // Deleted: no mapping from then on.
  CHECK(h.noteConfigSource("/ConfigMap/kueue-system/kueue-manager-config", 8, 80, "kueue-system",
                           true));
  CHECK(h.epochs().back().versionSeq == 0);
  CHECK(h.epochAt(8)->versionSeq == 0);
}

TEST_CASE("ChargeHistory: with a controller Pod a change takes effect when one next runs",
          "[charge_history]") {
  ChargeHistory h;
  const std::string cm = "/ConfigMap/kueue-system/kueue-manager-config";
  REQUIRE(h.noteConfigSource(cm, 2, 20, "kueue-system", false));
  REQUIRE(ChargeHistory::isKueueControllerPod("kueue-controller-manager-5d8c-x2", false));
  REQUIRE(ChargeHistory::isKueueControllerPod("manager-0", true));
  REQUIRE_FALSE(ChargeHistory::isKueueControllerPod("web-0", false));
  CHECK_FALSE(
      h.noteControllerPod("kueue-system", "kueue-controller-manager-a", 3, 30, true, false));
  h.noteWorkload("team/w", 4, 40, true);
  // The running controller keeps the configuration it read.
  CHECK_FALSE(h.noteConfigSource(cm, 5, 50, "kueue-system", false));
  CHECK(h.epochs().back().versionSeq == 2);
  // A controller in another namespace is not Kueue's for this ConfigMap.
  CHECK_FALSE(h.noteControllerPod("other", "kueue-controller-manager-z", 6, 60, true, false));
  CHECK(h.epochs().back().versionSeq == 2);
  // The Pod is replaced; the new one runs: the change takes effect there.
  CHECK_FALSE(h.noteControllerPod("kueue-system", "kueue-controller-manager-a", 7, 70, true, true));
  CHECK_FALSE(
      h.noteControllerPod("kueue-system", "kueue-controller-manager-b", 8, 80, false, false));
  CHECK(h.noteControllerPod("kueue-system", "kueue-controller-manager-b", 9, 90, true, false));
  REQUIRE(h.epochs().size() == 2);  // the reservation at 4 still needs the first
  const ConfigEpoch& now = h.epochs().back();
  CHECK(now.versionSeq == 5);
  CHECK(now.fromSeq == 9);
  CHECK(now.fromNs == 90);
  CHECK(now.controllerRestart);
  CHECK(h.epochAt(4)->versionSeq == 2);
  CHECK(h.epochAt(9)->versionSeq == 5);
  CHECK(h.versionReferenced(2));
  // The reservation ends: its epoch goes.
  h.noteWorkload("team/w", 10, 100, false);
  h.pruneEpochs();
  REQUIRE(h.epochs().size() == 1);
  CHECK_FALSE(h.versionReferenced(2));
}

TEST_CASE("ChargeHistory: serialize and restore give the same history and digest",
          "[charge_history]") {
  ChargeHistory h;
  h.noteConfigSource("kueue.openshift.io/Kueue//cluster", 1, 10, "openshift-kueue-operator", false);
  h.noteControllerPod("openshift-kueue-operator", "kueue-controller-manager-a", 2, 20, true, false);
  h.noteWorkload("team/w", 3, 30, true);
  h.noteInputChange(ChargeInput::kResourceSlice, 4);
  h.noteConfigSource("kueue.openshift.io/Kueue//cluster", 5, 50, "openshift-kueue-operator", false);
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::ChargeHistory>();
  h.serialize(b);
  ChargeHistory back;
  back.restore(b.asReader());
  CHECK(digestOf(back) == digestOf(h));
  CHECK(back.reservedAt("team/w").seq == 3);
  CHECK(back.lastInputChange(ChargeInput::kResourceSlice) == 4);
  CHECK(back.epochs() == h.epochs());
  // What follows folds the same way on both.
  CHECK(back.noteControllerPod("openshift-kueue-operator", "kueue-controller-manager-b", 6, 60,
                               true, false));
  CHECK(h.noteControllerPod("openshift-kueue-operator", "kueue-controller-manager-b", 6, 60, true,
                            false));
  CHECK(digestOf(back) == digestOf(h));
  h.noteWorkload("team/x", 7, 70, true);
  CHECK(digestOf(back) != digestOf(h));
}

}  // namespace ledger::replay
