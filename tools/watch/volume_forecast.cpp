#include "tools/watch/volume_forecast.h"

#include <sys/statvfs.h>

#include <cstdio>
#include <limits>
#include <utility>

namespace ledger::cli {

namespace {

constexpr double kNsPerSecond = 1e9;
constexpr double kSecondsPerDay = 86400.0;

void volumeGauge(std::string& out, const char* name, const char* help, double value) {
  char text[64];
  if (value == std::numeric_limits<double>::infinity()) {
    std::snprintf(text, sizeof text, "+Inf");
  } else {
    std::snprintf(text, sizeof text, "%.6g", value);
  }
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " +
         text + "\n";
}

}  // namespace

bool statVolume(const std::string& path, VolumeSpace* out) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return false;
  const std::uint64_t unit = vfs.f_frsize != 0 ? vfs.f_frsize : vfs.f_bsize;
  out->availableBytes = static_cast<std::uint64_t>(vfs.f_bavail) * unit;
  out->usedBytes = static_cast<std::uint64_t>(vfs.f_blocks - vfs.f_bfree) * unit;
  return true;
}

VolumeForecast::VolumeForecast(std::string path, std::chrono::seconds window)
    : path_(std::move(path)),
      windowNs_(std::chrono::duration_cast<std::chrono::nanoseconds>(window).count()) {}

void VolumeForecast::add(std::int64_t nowNs, const VolumeSpace& space) {
  std::lock_guard lock(mu_);
  // A clock stepped back would make a negative interval: start over.
  if (!samples_.empty() && nowNs <= samples_.back().timeNs) samples_.clear();
  samples_.push_back({nowNs, space});
  while (samples_.size() > 2 && samples_[1].timeNs <= nowNs - windowNs_) samples_.pop_front();
}

std::optional<double> VolumeForecast::rateLocked() const {
  if (samples_.size() < 2) return std::nullopt;
  const Sample& first = samples_.front();
  const Sample& last = samples_.back();
  const double seconds = static_cast<double>(last.timeNs - first.timeNs) / kNsPerSecond;
  const double grown =
      static_cast<double>(last.space.usedBytes) - static_cast<double>(first.space.usedBytes);
  return grown / seconds;
}

std::optional<double> VolumeForecast::growthBytesPerSecond() const {
  std::lock_guard lock(mu_);
  return rateLocked();
}

std::optional<double> VolumeForecast::daysUntilFull() const {
  std::lock_guard lock(mu_);
  const std::optional<double> rate = rateLocked();
  if (!rate) return std::nullopt;
  if (*rate <= 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(samples_.back().space.availableBytes) / *rate / kSecondsPerDay;
}

std::string VolumeForecast::metricsText(std::int64_t nowNs) {
  VolumeSpace space;
  if (!statVolume(path_, &space)) return {};
  add(nowNs, space);
  std::string out;
  volumeGauge(out, "ledger_volume_available_bytes",
              "Bytes the ledger's volume has left for the daemon (statvfs f_bavail).",
              static_cast<double>(space.availableBytes));
  if (const std::optional<double> rate = growthBytesPerSecond()) {
    volumeGauge(out, "ledger_volume_growth_bytes_per_second",
                "Growth of the bytes in use on the ledger's volume over the forecast window.",
                *rate);
  }
  if (const std::optional<double> days = daysUntilFull()) {
    volumeGauge(out, "ledger_volume_days_until_full",
                "Days until the ledger's volume is full at the growth rate over the forecast "
                "window (+Inf: not growing).",
                *days);
  }
  return out;
}

}  // namespace ledger::cli
