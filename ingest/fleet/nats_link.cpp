#include "ingest/fleet/nats_link.h"

#include <nats/nats.h>

#include <charconv>
#include <utility>

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

// A user file's "USER:PASSWORD" (its first line), split at the first ':'.
std::pair<std::string, std::string> readUser(const std::string& path) {
  const std::string line = readToken(path);
  const std::size_t colon = line.find(':');
  if (colon == 0 || colon == std::string::npos || line.find('\n') != std::string::npos) {
    throw FleetError(FleetError::Kind::kConfig, path + ": not one line USER:PASSWORD");
  }
  // The user names this program's reply subjects (_INBOX.USER.>): one
  // subject token.
  if (line.find_first_of(" \t.*>", 0) < colon) {
    throw FleetError(FleetError::Kind::kConfig,
                     path + ": the user name has a space, '.', '*' or '>' (it is a subject token)");
  }
  return {line.substr(0, colon), line.substr(colon + 1)};
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
  if (!options.userFile.empty()) {
    const auto [user, password] = readUser(options.userFile);
    configCheck(natsOptions_SetUserInfo(opts.get(), user.c_str(), password.c_str()), "NATS user");
    // Replies (JetStream's answers, acknowledgements, the records a pull
    // delivers) under a prefix of this user's own, so the servers can let
    // each user subscribe to its own replies only (deploy/fleet/nats.yaml):
    // under the shared _INBOX.> any user could read every other's.
    configCheck(natsOptions_SetCustomInboxPrefix(opts.get(), ("_INBOX." + user).c_str()),
                "NATS inbox prefix _INBOX." + user);
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
  if (options.onPublishError || options.onDuplicate) {
    onPublishError_ = options.onPublishError;
    onDuplicate_ = options.onDuplicate;
    jo.PublishAsync.AckHandler = &NatsLink::publishAckTrampoline;
    jo.PublishAsync.AckHandlerClosure = this;
  }
  s = natsConnection_JetStream(&jetStream_, connection_, &jo);
  if (s != NATS_OK) {
    natsConnection_Destroy(connection_);
    connection_ = nullptr;
    throw FleetError(FleetError::Kind::kConfig, "JetStream context: " + natsErrorText(s));
  }
}

void NatsLink::publishAckTrampoline(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error,
                                    void* self) {
  auto* link = static_cast<NatsLink*>(self);
  std::uint64_t seq = 0;
  const char* seqText = nullptr;
  if (msg != nullptr && natsMsgHeader_Get(msg, kHeaderSeq, &seqText) == NATS_OK) {
    seq = std::strtoull(seqText, nullptr, 10);
  }
  if (error != nullptr && link->onPublishError_) {
    link->onPublishError_(
        seq, error->ErrText != nullptr ? error->ErrText : natsStatus_GetText(error->Err));
  } else if (ack != nullptr && ack->Duplicate && link->onDuplicate_) {
    link->onDuplicate_(seq, ack->Sequence);
  }
  natsMsg_Destroy(msg);  // the handler owns it
}

std::optional<NatsLink::StoredMessage> NatsLink::storedMessage(const std::string& stream,
                                                               std::uint64_t streamSeq) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetMsg(&msg, jetStream_, stream.c_str(), streamSeq, nullptr, &code);
  if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) return std::nullopt;
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport, "reading message " + std::to_string(streamSeq) +
                                                       " of stream " + stream + ": " +
                                                       natsErrorText(s));
  }
  StoredMessage out;
  const char* subject = natsMsg_GetSubject(msg);
  if (subject != nullptr) out.subject = subject;
  const char* text = nullptr;
  if (natsMsgHeader_Get(msg, kHeaderChainHash, &text) == NATS_OK && text != nullptr) {
    out.chainHash = digestFromHex(text);
  }
  natsMsg_Destroy(msg);
  return out;
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

NatsLink::ShippedHead NatsLink::lastShipped(const std::string& stream, const std::string& cluster) {
  natsMsg* last = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const std::string subject = recordSubject(cluster);
  const natsStatus s =
      js_GetLastMsg(&last, jetStream_, stream.c_str(), subject.c_str(), nullptr, &code);
  if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) return {};
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport,
                     "looking up " + subject + " in stream " + stream + ": " + natsErrorText(s));
  }
  ShippedHead head;
  head.present = true;
  const char* text = nullptr;
  if (natsMsgHeader_Get(last, kHeaderSeq, &text) == NATS_OK && text != nullptr) {
    const std::string_view seqText(text);
    const auto [ptr, ec] =
        std::from_chars(seqText.data(), seqText.data() + seqText.size(), head.seq);
    if (ec != std::errc() || ptr != seqText.data() + seqText.size()) head.seq = 0;
  }
  if (natsMsgHeader_Get(last, kHeaderChainHash, &text) == NATS_OK && text != nullptr) {
    head.chainHash = digestFromHex(text);
  }
  natsMsg_Destroy(last);
  return head;
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
