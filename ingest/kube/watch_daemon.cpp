#include "ingest/kube/watch_daemon.h"

#include <spdlog/spdlog.h>

namespace ledger::kube {

namespace {

WriterOptions withWatched(WriterOptions writer, const std::vector<ResourceSpec>& resources) {
  for (const ResourceSpec& spec : resources) writer.watched.insert(spec.id());
  return writer;
}

}  // namespace

WatchDaemon::WatchDaemon(Ledger& ledger, DaemonOptions options)
    : ledger_(ledger),
      options_(std::move(options)),
      writer_(ledger, metrics_, withWatched(options_.writer, options_.resources)),
      server_(
          metrics_, [this] { return !writer_.failed() && !stopping_; }, options_.extraMetrics) {}

WatchDaemon::~WatchDaemon() { stop(); }

void WatchDaemon::start() {
  started_ = true;
  // Known before /readyz can be asked, so that it never answers for none.
  for (const ResourceSpec& spec : options_.resources) metrics_.registerResource(spec.id());
  if (!options_.listen.empty()) server_.start(options_.listen);
  writer_.start();
  spdlog::info("watching {} resource(s) on {} ({})", options_.resources.size(),
               options_.cluster.server, options_.cluster.source);
  for (const ResourceSpec& spec : options_.resources) {
    Cursor cursor;
    Status st = ledger_.cursor("watch:" + spec.id(), &cursor);
    if (!st.isOk() && !st.isNotFound()) throw ingest::LedgerError(st);
    if (st.isOk() && !cursor.resourceVersion.empty()) {
      spdlog::info("{}: resuming from the ledger's cursor, resourceVersion {}", spec.id(),
                   cursor.resourceVersion);
    }
    informers_.push_back(std::make_unique<Informer>(
        spec, options_.cluster, st.isOk() ? cursor.resourceVersion : std::string(), writer_,
        metrics_, options_.informer));
  }
  for (auto& informer : informers_) informer->start();
}

void WatchDaemon::stop() {
  if (stopping_ || !started_) return;
  stopping_ = true;
  spdlog::info("stopping: ending the watches and committing what they received");
  // First: a watch waiting for room in the writer's queue while the disk is
  // full would otherwise hold its join until space came back.
  writer_.requestStop();
  for (auto& informer : informers_) informer->stop();
  writer_.close();
  server_.stop();
  const auto& s = writer_.stats();
  spdlog::info("stopped: recorded {} event(s), {} duplicate(s); ledger at seq {}", s.recorded,
               s.duplicates, ledger_.lastSeq());
}

}  // namespace ledger::kube
