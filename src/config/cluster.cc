#include "config/cluster.h"

namespace trident {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp4:
      return "fp4";
  }
  return "?";
}

bool parse_precision(const std::string& name, Precision* out) {
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kTf32,
                      Precision::kFp32, Precision::kFp4}) {
    if (name == precision_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

double precision_bytes(Precision p) {
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16:
      return 2;
    case Precision::kFp8:
      return 1;
    case Precision::kTf32:
    case Precision::kFp32:
      return 4;
    case Precision::kFp4:
      return 0.5;
  }
  return 2;
}

const char* architecture_name(GpuArchitecture a) {
  switch (a) {
    case GpuArchitecture::kUnspecified:
      return "unspecified";
    case GpuArchitecture::kAmpere:
      return "ampere";
    case GpuArchitecture::kHopper:
      return "hopper";
    case GpuArchitecture::kBlackwell:
      return "blackwell";
  }
  return "?";
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kAuto:
      return "auto";
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
    case CollectiveAlgorithm::kNvlsTree:
      return "nvls_tree";
  }
  return "?";
}

const char* protocol_name(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::kAuto:
      return "auto";
    case CollectiveProtocol::kLL:
      return "ll";
    case CollectiveProtocol::kLL128:
      return "ll128";
    case CollectiveProtocol::kSimple:
      return "simple";
  }
  return "?";
}

const char* topology_name(Topology t) {
  switch (t) {
    case Topology::kSingleSwitch:
      return "single-switch";
    case Topology::kFatTree:
      return "fat-tree";
    case Topology::kRailOptimized:
      return "rail-optimized";
  }
  return "?";
}

}  // namespace trident
