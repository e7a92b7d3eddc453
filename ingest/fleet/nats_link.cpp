#include "ingest/fleet/nats_link.h"

#include <nats/nats.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

namespace {

// natsOptions is only needed while connecting.
struct OptionsDeleter {
  void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
};

void configCheck(natsStatus s, const std::string& what) {
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kConfig, what + ": " + natsErrorText(s));
  }
}

std::string readToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FleetError(FleetError::Kind::kConfig, "cannot read the NATS token file " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty()) throw FleetError(FleetError::Kind::kConfig, path + ": the token is empty");
  return token;
}

}  // namespace

std::string natsErrorText(int status) {
  std::string text = natsStatus_GetText(static_cast<natsStatus>(status));
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' && text != detail)
    text += " (" + std::string(detail) + ")";
  return text;
}

NatsLink::NatsLink(const NatsOptions& options) {
  natsOptions* raw = nullptr;
  configCheck(natsOptions_Create(&raw), "NATS options");
  std::unique_ptr<natsOptions, OptionsDeleter> opts(raw);
  std::vector<std::string> urls;
  std::stringstream list(options.urls);
  for (std::string url; std::getline(list, url, ',');) {
    if (!url.empty()) urls.push_back(url);
  }
  if (urls.empty()) throw FleetError(FleetError::Kind::kConfig, "no NATS server URL given");
  std::vector<const char*> servers;
  for (const auto& u : urls) servers.push_back(u.c_str());
  configCheck(natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size())),
              "NATS server URLs '" + options.urls + "'");
  if (!options.name.empty())
    configCheck(natsOptions_SetName(opts.get(), options.name.c_str()), "name");
  if (!options.tokenFile.empty()) {
    const std::string token = readToken(options.tokenFile);
    configCheck(natsOptions_SetToken(opts.get(), token.c_str()), "NATS token");
  }
  if (!options.caFile.empty()) {
    configCheck(natsOptions_SetSecure(opts.get(), true), "TLS");
    configCheck(natsOptions_LoadCATrustedCertificates(opts.get(), options.caFile.c_str()),
                "NATS CA file " + options.caFile);
  }
  // Never give up: a sidecar outlives any NATS outage (the local ledger is
  // the source of truth; publishing catches up). A first connection that
  // fails is retried in the background too, instead of failing the start.
  configCheck(natsOptions_SetMaxReconnect(opts.get(), -1), "reconnect");
  configCheck(natsOptions_SetReconnectWait(opts.get(), 500), "reconnect wait");
  configCheck(natsOptions_SetTimeout(opts.get(), 2000), "connect timeout");
  // libnats retries a failed first connection in the background only when
  // given a connected callback; without one, natsConnection_Connect blocks
  // retrying (for ever, with MaxReconnect -1), so the caller would neither
  // record nor see a stop signal while NATS is down.
  configCheck(natsOptions_SetRetryOnFailedConnect(
                  opts.get(), true, [](natsConnection*, void*) {}, nullptr),
              "retry on failed connect");
  natsStatus s = natsConnection_Connect(&connection_, opts.get());
  if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
    throw FleetError(FleetError::Kind::kConfig,
                     "connecting to NATS at " + options.urls + ": " + natsErrorText(s));
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = options.requestTimeoutMs;
  jo.PublishAsync.MaxPending = options.maxPendingPublishes;
  if (options.onPublishError) {
    onPublishError_ = options.onPublishError;
    jo.PublishAsync.ErrHandler = &NatsLink::publishErrorTrampoline;
    jo.PublishAsync.ErrHandlerClosure = this;
  }
  s = natsConnection_JetStream(&jetStream_, connection_, &jo);
  if (s != NATS_OK) {
    natsConnection_Destroy(connection_);
    connection_ = nullptr;
    throw FleetError(FleetError::Kind::kConfig, "JetStream context: " + natsErrorText(s));
  }
}

void NatsLink::publishErrorTrampoline(jsCtx*, jsPubAckErr* error, void* self) {
  std::uint64_t seq = 0;
  const char* seqText = nullptr;
  if (error->Msg != nullptr && natsMsgHeader_Get(error->Msg, kHeaderSeq, &seqText) == NATS_OK) {
    seq = std::strtoull(seqText, nullptr, 10);
  }
  std::string text = error->ErrText != nullptr ? error->ErrText : natsStatus_GetText(error->Err);
  static_cast<NatsLink*>(self)->onPublishError_(seq, text);
}

NatsLink::~NatsLink() {
  jsCtx_Destroy(jetStream_);
  if (connection_ != nullptr) {
    natsConnection_Close(connection_);
    natsConnection_Destroy(connection_);
  }
}

bool NatsLink::connected() const {
  return natsConnection_Status(connection_) == NATS_CONN_STATUS_CONNECTED;
}

std::string NatsLink::connectedUrl() const {
  char buffer[512] = {0};
  if (natsConnection_GetConnectedUrl(connection_, buffer, sizeof buffer) != NATS_OK) return {};
  return buffer;
}

std::uint64_t NatsLink::lastShippedSeq(const std::string& stream, const std::string& cluster) {
  natsMsg* last = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const std::string subject = recordSubject(cluster);
  const natsStatus s =
      js_GetLastMsg(&last, jetStream_, stream.c_str(), subject.c_str(), nullptr, &code);
  if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) return 0;
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport,
                     "looking up " + subject + " in stream " + stream + ": " + natsErrorText(s));
  }
  const char* seqText = nullptr;
  std::uint64_t seq = 0;
  if (natsMsgHeader_Get(last, kHeaderSeq, &seqText) == NATS_OK) {
    seq = std::strtoull(seqText, nullptr, 10);
  }
  natsMsg_Destroy(last);
  return seq;
}

void NatsLink::ensureStream(const StreamSettings& stream) {
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&info, jetStream_, stream.name.c_str(), nullptr, &code);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(info);
    return;
  }
  if (s != NATS_NOT_FOUND && code != JSStreamNotFoundErr) {
    throw FleetError(FleetError::Kind::kTransport,
                     "looking up stream " + stream.name + ": " + natsErrorText(s));
  }
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = stream.name.c_str();
  const char* subjects[] = {kStreamSubjects};
  config.Subjects = subjects;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.Replicas = stream.replicas;
  config.Duplicates = stream.duplicateWindowNs;
  s = js_AddStream(&info, jetStream_, &config, nullptr, &code);
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport, "creating stream " + stream.name + " (" +
                                                       std::to_string(stream.replicas) +
                                                       " replicas): " + natsErrorText(s));
  }
  jsStreamInfo_Destroy(info);
}

}  // namespace ledger::fleet
