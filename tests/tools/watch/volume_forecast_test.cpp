#include "tools/watch/volume_forecast.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

namespace volume_forecast_test {

using ledger::cli::statVolume;
using ledger::cli::VolumeForecast;
using ledger::cli::VolumeSpace;

constexpr std::int64_t kSecondNs = 1'000'000'000;
constexpr std::int64_t kHourNs = 3600 * kSecondNs;

VolumeSpace space(std::uint64_t available, std::uint64_t used) { return {available, used}; }

TEST_CASE("a volume forecast needs two samples for a rate", "[volume_forecast]") {
  VolumeForecast f("/", std::chrono::hours(1));
  CHECK_FALSE(f.growthBytesPerSecond().has_value());
  CHECK_FALSE(f.daysUntilFull().has_value());
  f.add(kHourNs, space(1000, 10));
  CHECK_FALSE(f.daysUntilFull().has_value());
}

TEST_CASE("the days until full are the available bytes over the rate", "[volume_forecast]") {
  VolumeForecast f("/", std::chrono::hours(1));
  // 86400 bytes a day grown, 10 days' worth available.
  f.add(0, space(864000 + 3600, 0));
  f.add(kHourNs, space(864000, 3600));
  REQUIRE(f.growthBytesPerSecond().has_value());
  CHECK(*f.growthBytesPerSecond() == Approx(1.0));
  CHECK(*f.daysUntilFull() == Approx(10.0));
}

TEST_CASE("a volume that does not grow has no end in sight", "[volume_forecast]") {
  VolumeForecast f("/", std::chrono::hours(1));
  f.add(0, space(5000, 700));
  f.add(kHourNs, space(5100, 600));  // compaction freed space
  CHECK(*f.daysUntilFull() == std::numeric_limits<double>::infinity());
}

TEST_CASE("the rate is over the window, not the whole past", "[volume_forecast]") {
  VolumeForecast f("/", std::chrono::hours(1));
  f.add(0, space(1'000'000, 0));
  // A burst long ago, then steady growth of 2 bytes a second.
  f.add(kHourNs, space(1'000'000, 500'000));
  f.add(2 * kHourNs, space(1'000'000, 500'000 + 7200));
  f.add(3 * kHourNs, space(1'000'000, 500'000 + 14400));
  CHECK(*f.growthBytesPerSecond() == Approx(2.0));
}

TEST_CASE("a clock stepped back starts the window over", "[volume_forecast]") {
  VolumeForecast f("/", std::chrono::hours(1));
  f.add(2 * kHourNs, space(1000, 0));
  f.add(kHourNs, space(1000, 100));
  CHECK_FALSE(f.growthBytesPerSecond().has_value());
}

TEST_CASE("statVolume reads the volume of a directory", "[volume_forecast]") {
  VolumeSpace s;
  REQUIRE(statVolume(std::filesystem::temp_directory_path().string(), &s));
  CHECK(s.usedBytes + s.availableBytes > 0);
  CHECK_FALSE(statVolume("/nonexistent/volume/forecast", &s));
}

TEST_CASE("the volume's gauges on /metrics", "[volume_forecast]") {
  VolumeForecast f(std::filesystem::temp_directory_path().string(), std::chrono::hours(1));
  const std::string first = f.metricsText(kHourNs);
  CHECK(first.find("ledger_volume_available_bytes ") != std::string::npos);
  CHECK(first.find("ledger_volume_days_until_full") == std::string::npos);
  const std::string second = f.metricsText(kHourNs + kSecondNs);
  CHECK(second.find("# TYPE ledger_volume_days_until_full gauge\nledger_volume_days_until_full ") !=
        std::string::npos);
  CHECK(second.find("ledger_volume_growth_bytes_per_second ") != std::string::npos);
  VolumeForecast missing("/nonexistent/volume/forecast", std::chrono::hours(1));
  CHECK(missing.metricsText(kHourNs).empty());
}

}  // namespace volume_forecast_test
