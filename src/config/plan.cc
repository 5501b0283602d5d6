#include "config/plan.h"

#include <utility>

namespace trident {

const char* schedule_name(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::kGpipe:
      return "gpipe";
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kInterleaved1F1B:
      return "interleaved-1f1b";
  }
  return "?";
}

bool parse_schedule(const std::string& name, ScheduleKind* out) {
  for (ScheduleKind s :
       {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kInterleaved1F1B}) {
    if (name == schedule_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

bool parse_recompute(const std::string& name, Recompute* out) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (name == recompute_name(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

namespace {

// The bit of `name` in a table of Megatron module names, or 0 when it is not there.
template <size_t N>
unsigned module_bit(const std::string& name, const std::pair<const char*, unsigned> (&table)[N]) {
  for (const auto& [n, bit] : table) {
    if (name == n) return bit;
  }
  return 0;
}

}  // namespace

unsigned parse_recompute_module(const std::string& name) {
  static const std::pair<const char*, unsigned> kModules[] = {
      {"core_attn", kRecomputeCoreAttn},
      {"moe_act", kRecomputeMoeAct},
      {"layernorm", kRecomputeLayernorm},
      {"mla_up_proj", kRecomputeMlaUpProj},
      {"mlp", kRecomputeMlp},
      {"moe", kRecomputeMoe},
      {"shared_experts", kRecomputeSharedExperts}};
  return module_bit(name, kModules);
}

unsigned parse_cuda_graph_module(const std::string& name) {
  static const std::pair<const char*, unsigned> kModules[] = {
      {"attn", kGraphAttn},
      {"mlp", kGraphMlp},
      {"moe", kGraphMoe},
      {"moe_router", kGraphMoeRouter},
      {"moe_preprocess", kGraphMoePreprocess},
      {"full_iteration", kGraphFullIteration}};
  return module_bit(name, kModules);
}

unsigned parse_activation_offload(const std::string& name) {
  if (name == "expert_fc1") return kOffloadExpertFc1;
  if (name == "moe_act") return kOffloadMoeAct;
  return 0;
}

const char* parallel_dim_name(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTensor:
      return "tensor";
    case ParallelDim::kData:
      return "data";
    case ParallelDim::kPipeline:
      return "pipeline";
    case ParallelDim::kContext:
      return "context";
  }
  return "?";
}

bool parse_parallel_dim(const std::string& name, ParallelDim* out) {
  for (ParallelDim d :
       {ParallelDim::kTensor, ParallelDim::kContext, ParallelDim::kData, ParallelDim::kPipeline}) {
    if (name == parallel_dim_name(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

std::vector<ParallelDim> full_placement(const std::vector<ParallelDim>& placement) {
  for (ParallelDim d : placement) {
    if (d == ParallelDim::kContext) return placement;
  }
  std::vector<ParallelDim> out;
  for (ParallelDim d : placement) {
    out.push_back(d);
    if (d == ParallelDim::kTensor) out.push_back(ParallelDim::kContext);
  }
  return out;
}

const char* cp_comm_type_name(CpCommType c) {
  switch (c) {
    case CpCommType::kP2p:
      return "p2p";
    case CpCommType::kAllGather:
      return "all_gather";
    case CpCommType::kA2a:
      return "a2a";
  }
  return "?";
}

bool parse_cp_comm_type(const std::string& name, CpCommType* out) {
  for (CpCommType c : {CpCommType::kP2p, CpCommType::kAllGather, CpCommType::kA2a}) {
    if (name == cp_comm_type_name(c)) {
      *out = c;
      return true;
    }
  }
  return false;
}

const char* cp_implementation_name(CpImplementation c) {
  return c == CpImplementation::kTorch ? "torch" : "transformer_engine";
}

bool parse_cp_implementation(const std::string& name, CpImplementation* out) {
  for (CpImplementation c : {CpImplementation::kTransformerEngine, CpImplementation::kTorch}) {
    if (name == cp_implementation_name(c)) {
      *out = c;
      return true;
    }
  }
  return false;
}

namespace {
constexpr AttentionBackend kBackends[] = {AttentionBackend::kAuto, AttentionBackend::kFlash,
                                          AttentionBackend::kFused, AttentionBackend::kUnfused,
                                          AttentionBackend::kFlash2};
constexpr Fp8Recipe kRecipes[] = {Fp8Recipe::kDelayed, Fp8Recipe::kTensorwise,
                                  Fp8Recipe::kBlockwise, Fp8Recipe::kMxfp8};
}  // namespace

const char* attention_backend_name(AttentionBackend b) {
  switch (b) {
    case AttentionBackend::kAuto:
      return "auto";
    case AttentionBackend::kFlash:
      return "flash";
    case AttentionBackend::kFused:
      return "fused";
    case AttentionBackend::kUnfused:
      return "unfused";
    case AttentionBackend::kFlash2:
      return "flash2";
  }
  return "?";
}

bool parse_attention_backend(const std::string& name, AttentionBackend* out) {
  for (AttentionBackend b : kBackends) {
    if (name == attention_backend_name(b)) {
      *out = b;
      return true;
    }
  }
  return false;
}

const char* fp8_recipe_name(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kTensorwise:
      return "tensorwise";
    case Fp8Recipe::kBlockwise:
      return "blockwise";
    case Fp8Recipe::kMxfp8:
      return "mxfp8";
  }
  return "?";
}

bool parse_fp8_recipe(const std::string& name, Fp8Recipe* out) {
  for (Fp8Recipe r : kRecipes) {
    if (name == fp8_recipe_name(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

const char* dp_sharding_name(DpSharding s) {
  switch (s) {
    case DpSharding::kNoShard:
      return "no_shard";
    case DpSharding::kOptim:
      return "optim";
    case DpSharding::kOptimGrads:
      return "optim_grads";
    case DpSharding::kOptimGradsParams:
      return "optim_grads_params";
  }
  return "?";
}

bool parse_dp_sharding(const std::string& name, DpSharding* out) {
  for (DpSharding s : {DpSharding::kNoShard, DpSharding::kOptim, DpSharding::kOptimGrads,
                       DpSharding::kOptimGradsParams}) {
    if (name == dp_sharding_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char* state_dtype_name(StateDtype d) {
  switch (d) {
    case StateDtype::kFp32:
      return "fp32";
    case StateDtype::kFp16:
      return "fp16";
    case StateDtype::kBf16:
      return "bf16";
    case StateDtype::kFp8:
      return "fp8";
  }
  return "?";
}

bool parse_state_dtype(const std::string& name, StateDtype* out) {
  for (StateDtype d : {StateDtype::kFp32, StateDtype::kFp16, StateDtype::kBf16, StateDtype::kFp8}) {
    if (name == state_dtype_name(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

double state_dtype_bytes(StateDtype d) {
  switch (d) {
    case StateDtype::kFp32:
      return 4;
    case StateDtype::kFp16:
    case StateDtype::kBf16:
      return 2;
    case StateDtype::kFp8:
      return 1;
  }
  return 4;
}

AttentionBackend resolve_attention_backend(AttentionBackend b, GpuArchitecture arch) {
  if (b != AttentionBackend::kAuto) return b;
  switch (arch) {
    case GpuArchitecture::kHopper:
    case GpuArchitecture::kBlackwell:
      return AttentionBackend::kFused;
    case GpuArchitecture::kAmpere:
      return AttentionBackend::kFlash;
    case GpuArchitecture::kUnspecified:
      break;
  }
  return AttentionBackend::kUnfused;
}

}  // namespace trident
