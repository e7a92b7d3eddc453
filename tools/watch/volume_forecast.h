// The days until the ledger's volume is full at the current rate: the
// `ledger_volume_*` gauges of the --watch daemon's /metrics.
//
// Why: the ledger only grows until the daemon archives it, and a full volume
// stops the recording (/readyz 503). An operator needs the warning days
// before, not the failure; the alert in deploy/prometheusrule.yaml fires on
// ledger_volume_days_until_full.
//
// How: each scrape (metricsText) reads the volume holding the ledger
// (statvfs: the bytes available to an unprivileged writer, which is what the
// daemon is, and the bytes in use) and keeps the samples of the last
// `window`. The growth rate is the change of the bytes in use between the
// oldest and the newest sample of the window, over the time between them;
// the days until full are the available bytes over that rate. The volume's
// use, not the ledger's files, because anything else on the volume fills it
// too. A volume that did not grow over the window has no end in sight
// (+Inf); before two samples there is no rate and the gauges that need one
// are left out.
//
// Ownership: a value type; no resources besides its samples.
// Thread safety: every member locks; metricsText may be called from any
// thread (the health server's).
// Errors: statVolume returns false (errno set) when the volume cannot be
// read; metricsText then leaves the volume's gauges out. Nothing throws
// except std::bad_alloc.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace ledger::cli {

struct VolumeSpace {
  std::uint64_t availableBytes = 0;  // statvfs f_bavail * f_frsize
  std::uint64_t usedBytes = 0;       // (f_blocks - f_bfree) * f_frsize
};

// The space of the volume holding `path`; false (errno set) if statvfs fails.
[[nodiscard]] bool statVolume(const std::string& path, VolumeSpace* out);

class VolumeForecast {
 public:
  VolumeForecast(std::string path, std::chrono::seconds window);

  // Keeps a sample taken at `nowNs` (wall clock, ns) and drops those that
  // fall out of the window (keeping the newest of them, so the window stays
  // covered once it has been).
  void add(std::int64_t nowNs, const VolumeSpace& space);

  // Bytes per second over the window; absent before two samples.
  std::optional<double> growthBytesPerSecond() const;
  // Days until the available bytes are used at that rate: +Inf when the
  // volume did not grow; absent before two samples.
  std::optional<double> daysUntilFull() const;

  // Samples the volume (statVolume of the path) and renders
  // ledger_volume_available_bytes, ledger_volume_growth_bytes_per_second and
  // ledger_volume_days_until_full.
  std::string metricsText(std::int64_t nowNs);

 private:
  struct Sample {
    std::int64_t timeNs = 0;
    VolumeSpace space;
  };
  std::optional<double> rateLocked() const;

  const std::string path_;
  const std::int64_t windowNs_;
  mutable std::mutex mu_;
  std::deque<Sample> samples_;
};

}  // namespace ledger::cli
