#include "tools/cli.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "ledger/format.h"

namespace ledger::cli {

namespace {

// Whether `text` starts with a well-formed UTF-8 sequence of a character
// past ASCII (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF);
// its length, 0 when it does not.
std::size_t utf8SequenceLength(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

// %* : the message as a JSON string body (jsonStringBody), so that
// --log-format json lines always parse.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string body =
        jsonStringBody(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(body.data(), body.data() + body.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::string jsonStringBody(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      out += {'\\', 'u', '0', '0', hex[u >> 4], hex[u & 15]};
    } else if (u >= 0x80) {
      // Parser messages quote the input, which may hold any bytes: a line
      // with bytes that are not UTF-8 is not JSON, and a collector drops it.
      const std::size_t n = utf8SequenceLength(text.substr(i));
      if (n == 0) {
        out += "\\ufffd";
        ++i;
        continue;
      }
      out.append(text.substr(i, n));
      i += n;
      continue;
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

std::string resolveLedgerDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("LEDGER_DIR"); env != nullptr && *env != '\0') return env;
  return "./ledger-data";
}

OutputFormat resolveOutput(const std::string& flag, bool allowCsv) {
  if (flag.empty()) return isatty(STDOUT_FILENO) ? OutputFormat::kTable : OutputFormat::kJson;
  if (flag == "json") return OutputFormat::kJson;
  if (flag == "table") return OutputFormat::kTable;
  if (flag == "csv" && allowCsv) return OutputFormat::kCsv;
  throw UsageError("-o must be json" + std::string(allowCsv ? ", csv" : "") + " or table, not '" +
                   flag + "'");
}

void rejectNegativeUnsigned(const boost::program_options::parsed_options& parsed) {
  namespace po = boost::program_options;
  for (const po::option& o : parsed.options) {
    if (o.unregistered || o.string_key.empty() || parsed.description == nullptr) continue;
    const po::option_description* d = parsed.description->find_nothrow(o.string_key, false);
    if (d == nullptr) continue;
    const auto* base = dynamic_cast<const po::typed_value_base*>(d->semantic().get());
    if (base == nullptr) continue;
    const std::type_info& type = base->value_type();
    if (type != typeid(std::uint64_t) && type != typeid(std::size_t) && type != typeid(unsigned) &&
        type != typeid(unsigned long long)) {
      continue;
    }
    for (const std::string& v : o.value) {
      const auto first = v.find_first_not_of(" \t");
      if (first != std::string::npos && v[first] == '-') {
        throw UsageError("--" + o.string_key + " must be a non-negative integer, not '" + v + "'");
      }
    }
  }
}

std::string versionText(const char* program) {
  return std::string(program) + " " + LEDGER_VERSION + " (ledger format " +
         std::to_string(format::kOldestFormat) + ".." + std::to_string(format::kCurrentFormat) +
         ")";
}

void setUpLogging(const std::string& format, const std::string& level) {
  auto logger = spdlog::stderr_color_mt("ledger");
  spdlog::set_default_logger(logger);
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":"%*"})");
    spdlog::set_formatter(std::move(formatter));
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  }
  spdlog::set_level(spdlog::level::from_str(level.empty() ? "info" : level));
}

std::optional<int> parseCommandLine(
    const char* program, int argc, char** argv,
    const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional,
    boost::program_options::variables_map* vm) {
  namespace po = boost::program_options;
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(options).positional(positional).run();
    rejectNegativeUnsigned(parsed);
    po::store(parsed, *vm);
    po::notify(*vm);
  } catch (const po::error& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (vm->count("help")) {
    std::cout << options;
    return kExitOk;
  }
  if (vm->count("version")) {
    std::cout << versionText(program) << "\n";
    return kExitOk;
  }
  return std::nullopt;
}

void warnIfOlderProjections(const Ledger& ledger) {
  if (ledger.projectionFormat() >= format::kProjectionFormat || ledger.lastSeq() == 0) return;
  spdlog::warn(
      "the ledger's projections were written by an older projector (projection format {}, this "
      "build's is {}): this answer reads them as they are and may miss what this build projects; "
      "run `ledger-replay rebuild-projection` (`ledger-replay verify` names the first that "
      "differs)",
      ledger.projectionFormat(), format::kProjectionFormat);
}

std::unique_ptr<Ledger> openForReading(const std::string& dir) {
  std::unique_ptr<Ledger> ledger;
  Ledger::Options options;
  options.createIfMissing = false;
  options.readOnly = true;
  Status st = Ledger::open(dir, options, &ledger);
  if (!st.isOk()) throw ProgramError(st);
  return ledger;
}

std::unique_ptr<Ledger> openForWriting(const std::string& dir) {
  std::unique_ptr<Ledger> ledger;
  Ledger::Options options;
  options.createIfMissing = false;
  Status st = Ledger::open(dir, options, &ledger);
  if (!st.isOk()) throw ProgramError(st);
  return ledger;
}

}  // namespace ledger::cli
