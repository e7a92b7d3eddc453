#include "object_reads.h"

#include <string>

namespace ledger::replay {

ObjectReads::ObjectReads(const Ledger& ledger, std::vector<std::uint64_t> seqs, bool helper)
    : ledger_(ledger), seqs_(std::move(seqs)), objects_(seqs_.size()), back_(seqs_.size()) {
  if (!helper || seqs_.empty()) return;
  helper_ = std::thread([this] {
    std::size_t begin = 0, end = 0;
    while (takeFront(&begin, &end)) {
      Status st;
      try {
        st = readChunk(begin, end);
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

bool ObjectReads::takeFront(std::size_t* begin, std::size_t* end) {
  std::lock_guard lock(mu_);
  if (!failure_.isOk() || front_ >= back_) return false;
  *begin = front_;
  front_ = std::min(back_, front_ + kChunk);
  *end = front_;
  return true;
}

bool ObjectReads::takeBack(std::size_t* begin, std::size_t* end) {
  std::lock_guard lock(mu_);
  if (!failure_.isOk() || front_ >= back_) return false;
  *end = back_;
  back_ = back_ - std::min(back_ - front_, kChunk);
  *begin = back_;
  return true;
}

void ObjectReads::fail(Status st) {
  std::lock_guard lock(mu_);
  if (failure_.isOk()) failure_ = std::move(st);
}

Status ObjectReads::readChunk(std::size_t begin, std::size_t end) {
  const std::vector<std::uint64_t> part(seqs_.begin() + static_cast<std::ptrdiff_t>(begin),
                                        seqs_.begin() + static_cast<std::ptrdiff_t>(end));
  std::size_t next = begin;
  // Each chunk writes only its own slots of objects_.
  return ledger_.readProjectionsWords(part,
                                      [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                        objects_[next++] = std::make_unique<StoredObject>(seq, w);
                                      });
}

Status ObjectReads::finish() {
  std::size_t begin = 0, end = 0;
  while (takeBack(&begin, &end)) {
    Status st;
    try {
      st = readChunk(begin, end);
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
