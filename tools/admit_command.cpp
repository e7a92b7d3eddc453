#include "tools/admit_command.h"

#include <memory>
#include <stdexcept>

#include "ingest/workload_manifest.h"
#include "replay/admission/admission.h"
#include "replay/fold/replayer.h"
#include "tools/progress.h"
#include "tools/query_commands.h"
#include "tools/render/admission_format.h"

namespace ledger::cli {

namespace {

namespace adm = replay::admission;

std::uint64_t admitSeq(const Ledger& ledger, const QueryArgs& args) {
  if (args.seq && args.at) throw UsageError("give --at or --seq, not both");
  if (args.seq) return std::min(*args.seq, ledger.lastSeq());
  if (args.at) {
    checkMoment(ledger, *args.at);
    return replay::Replayer(ledger).seqAt(*args.at);
  }
  return ledger.lastSeq();
}

}  // namespace

std::vector<std::string> addManifestObjects(replay::ClusterState& state,
                                            const std::vector<nlohmann::json>& objects) {
  std::vector<std::string> notes;
  for (const nlohmann::json& object : objects) {
    const std::string kind = object.value("kind", "");
    const auto& meta = object.at("metadata");
    const std::string ns = meta.value("namespace", "");
    const std::string name = meta.value("name", "");
    const bool replaces =
        kind == "DeviceClass"
            ? state.find(replay::ObjectKind::kDeviceClass, name) != nullptr
            : state.find(replay::ObjectKind::kResourceClaimTemplate, ns, name) != nullptr;
    state.apply(state.seq(),
                ingest::clusterObjectRecord(object, state.seq(), state.timeNs()).asPtr());
    notes.push_back(ingest::describeManifestObject(object) + " from the manifest file " +
                    (replaces ? "replaces the ledger's" : "is taken as existing"));
  }
  return notes;
}

int runAdmit(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  const bool fromFile = args.workloadFile.has_value();
  if (fromFile == !args.target.empty()) {
    throw UsageError("admit: give a workload as NAMESPACE/NAME or --workload FILE (one of them)");
  }
  ingest::WorkloadManifest manifest;
  std::string ns, name;
  if (fromFile) {
    try {
      manifest = ingest::loadWorkloadManifest(*args.workloadFile);
    } catch (const std::exception& e) {
      throw UsageError(std::string("admit: ") + e.what());
    }
    ns = manifest.ns;
    name = manifest.name;
  } else {
    const auto slash = args.target.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == args.target.size()) {
      throw UsageError("admit: the workload must be NAMESPACE/NAME, got '" + args.target + "'");
    }
    ns = args.target.substr(0, slash);
    name = args.target.substr(slash + 1);
  }

  const std::uint64_t seq = admitSeq(ledger, args);
  ProgressBar progress("admit");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.progress = progress.callback();
  fo.onBadCheckpoint = warnBadCheckpoint;
  replay::ClusterState state = replay::Replayer(ledger).foldTo(seq, fo);
  progress.done();
  // The templates and DeviceClasses the file brings, as `kubectl apply -f`
  // would create them with the workload (workload_manifest.h).
  const std::vector<std::string> added = addManifestObjects(state, manifest.clusterObjects);

  std::unique_ptr<replay::StoredObject> fileWorkload;
  const replay::StoredObject* subject = nullptr;
  if (fromFile) {
    fileWorkload = std::make_unique<replay::StoredObject>(0, manifest.workloadRecord.asPtr());
    subject = fileWorkload.get();
  } else {
    subject = state.find(replay::ObjectKind::kWorkload, ns, name);
    if (subject == nullptr) {
      throw UsageError("admit: no Workload " + args.target + " at that moment (seq " +
                       std::to_string(state.seq()) + ")");
    }
  }
  adm::AdmissionSubject s;
  s.ns = ns;
  s.name = name;
  s.workload = subject->projection().getBody().getWorkload();
  s.creationNs = subject->projection().getCreationNs();
  // A manifest without creationTimestamp would be created now: the newest.
  if (fromFile && s.creationNs == 0) s.creationNs = state.timeNs() + 1;
  s.fromLedger = !fromFile;
  adm::AdmissionReport report = adm::evaluateAdmission(state, s);
  report.warnings.insert(report.warnings.end(), added.begin(), added.end());
  for (const std::string& o : manifest.ignored) {
    report.warnings.push_back(o + " in the manifest file is ignored");
  }
  if (args.output == OutputFormat::kJson) {
    out << render::admissionToJson(report).dump(2) << "\n";
  } else {
    out << render::admissionToTable(report);
  }
  return kExitOk;
}

}  // namespace ledger::cli
