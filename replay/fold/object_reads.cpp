#include "replay/fold/object_reads.h"

#include <capnp/serialize.h>

#include <map>
#include <string>

#include "schema/checkpoint.capnp.h"

namespace ledger::replay {

ObjectReads::ObjectReads(const Ledger& ledger, std::vector<ObjectRef> refs, bool helper)
    : ledger_(ledger) {
  plan(refs);
  start(helper);
}

ObjectReads::ObjectReads(const Ledger& ledger, const std::vector<std::uint64_t>& seqs, bool helper)
    : ledger_(ledger) {
  std::vector<ObjectRef> refs;
  refs.reserve(seqs.size());
  for (std::uint64_t seq : seqs) refs.push_back(ObjectRef{seq, {}});
  plan(refs);
  start(helper);
}

void ObjectReads::plan(const std::vector<ObjectRef>& refs) {
  seqs_.reserve(refs.size());
  for (const ObjectRef& r : refs) seqs_.push_back(r.seq);
  objects_.resize(refs.size());
  // Copies first (the helper starts there: fewer, larger reads), grouped by
  // chunk in key order; then the projection's records in seq order, which
  // reads each block once.
  std::map<CheckpointChunkId, std::vector<std::size_t>> byChunk;
  Unit records;
  std::vector<Unit> recordUnits;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (refs[i].copy.checkpointSeq != 0) {
      byChunk[refs[i].copy].push_back(i);
      continue;
    }
    records.slots.push_back(i);
    if (records.slots.size() == kProjectionBatch) {
      recordUnits.push_back(std::move(records));
      records = Unit();
    }
  }
  if (!records.slots.empty()) recordUnits.push_back(std::move(records));
  Unit chunks;
  for (auto& [id, wanted] : byChunk) {
    chunks.ids.push_back(id);
    chunks.wanted.push_back(std::move(wanted));
    if (chunks.ids.size() == kChunkBatch) {
      units_.push_back(std::move(chunks));
      chunks = Unit();
    }
  }
  if (!chunks.ids.empty()) units_.push_back(std::move(chunks));
  for (Unit& u : recordUnits) units_.push_back(std::move(u));
  back_ = units_.size();
}

void ObjectReads::start(bool helper) {
  if (!helper || units_.empty()) return;
  helper_ = std::thread([this] {
    std::size_t unit = 0;
    while (takeFront(&unit)) {
      Status st;
      try {
        st = read(units_[unit]);
      } catch (const std::exception& e) {  // std::bad_alloc
        st = Status::ioError(std::string("reading objects: ") + e.what());
      }
      if (!st.isOk()) fail(std::move(st));
    }
  });
}

ObjectReads::~ObjectReads() {
  {
    std::lock_guard lock(mu_);
    front_ = back_;  // nothing more to take
  }
  joinHelper();
}

void ObjectReads::joinHelper() {
  if (helper_.joinable()) helper_.join();
}

bool ObjectReads::takeFront(std::size_t* unit) {
  std::lock_guard lock(mu_);
  if (!failure_.isOk() || front_ >= back_) return false;
  *unit = front_++;
  return true;
}

bool ObjectReads::takeBack(std::size_t* unit) {
  std::lock_guard lock(mu_);
  if (!failure_.isOk() || front_ >= back_) return false;
  *unit = --back_;
  return true;
}

void ObjectReads::fail(Status st) {
  std::lock_guard lock(mu_);
  if (failure_.isOk()) failure_ = std::move(st);
}

Status ObjectReads::read(const Unit& unit) {
  if (!unit.ids.empty()) return readChunks(unit);
  std::vector<std::uint64_t> part;
  part.reserve(unit.slots.size());
  for (std::size_t slot : unit.slots) part.push_back(seqs_[slot]);
  std::size_t next = 0;
  // Each unit writes only its own slots of objects_.
  return ledger_.readProjectionsWords(
      part, [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
        objects_[unit.slots[next++]] = std::make_unique<StoredObject>(seq, w);
      });
}

Status ObjectReads::readChunks(const Unit& unit) {
  Status problem = Status::ok();  // the first chunk that lacks what it should hold
  Status st = ledger_.readCheckpointChunks(
      unit.ids, [&](std::size_t i, kj::ArrayPtr<const capnp::word> words) {
        auto fault = [&](const std::string& what) {
          if (problem.isOk()) {
            problem =
                Status::corruption("checkpoint chunk " + std::to_string(unit.ids[i].checkpointSeq) +
                                   "/" + std::to_string(unit.ids[i].chunk) + " " + what);
          }
        };
        capnp::FlatArrayMessageReader reader(words);
        auto chunk = reader.getRoot<schema::CheckpointChunk>();
        auto seqs = chunk.getSeqs();
        auto records = chunk.getRecords();
        if (seqs.size() != records.size()) return fault("is malformed");
        for (std::size_t slot : unit.wanted[i]) {
          const std::uint64_t seq = seqs_[slot];
          // Seqs ascend within a chunk: a binary search finds the copy (Cap'n
          // Proto's list iterators are not random-access for <algorithm>).
          unsigned lo = 0, hi = seqs.size();
          while (lo < hi) {
            const unsigned mid = lo + (hi - lo) / 2;
            if (seqs[mid] < seq) {
              lo = mid + 1;
            } else {
              hi = mid;
            }
          }
          if (lo == seqs.size() || seqs[lo] != seq) {
            fault("has no seq " + std::to_string(seq));
            continue;
          }
          auto bytes = records[lo];
          // Cap'n Proto places every blob on a word boundary; StoredObject
          // copies the words.
          if (bytes.size() % sizeof(capnp::word) != 0) {
            fault("copy of seq " + std::to_string(seq) + " is not a whole number of words");
            continue;
          }
          objects_[slot] = std::make_unique<StoredObject>(
              seq, kj::arrayPtr(reinterpret_cast<const capnp::word*>(bytes.begin()),
                                bytes.size() / sizeof(capnp::word)));
        }
      });
  return st.isOk() ? problem : st;
}

Status ObjectReads::finish() {
  std::size_t unit = 0;
  while (takeBack(&unit)) {
    Status st;
    try {
      st = read(units_[unit]);
    } catch (...) {
      fail(Status::ioError("reading objects"));
      joinHelper();
      throw;
    }
    if (!st.isOk()) fail(std::move(st));
  }
  joinHelper();
  std::lock_guard lock(mu_);
  return failure_;
}

}  // namespace ledger::replay
