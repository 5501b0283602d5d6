#include "workload/reserved_memory.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trident {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// CUDA context and loaded kernel modules of a process that has run a transformer's forward on
// an H100 and holds no communicator: vLLM's non-torch memory at TP 1, 1.79 GiB
// (vllm-project/vllm PR #10511, Llama-3-8B, CUDA 12 with lazy module loading). NVIDIA/nccl
// issue #1685 reads 1.06 GB for a PyTorch process before its first collective connected.
constexpr double kCudaContextBytes = 1.79 * kGiB;

// NCCL (NVIDIA/nccl src/init.cc:810-813, src/include/device.h:26, 97-98, 114-115 at 5067397c):
// one connection holds the LL buffer (8 lines x 512 threads x 8 steps x 16 B = 512 KiB), the
// LL128 buffer (120 x 640 x 8 x 8 B = 4.6875 MiB) and the Simple buffer (NCCL_BUFFSIZE, 4 MiB),
// allocated through cuMem in 2 MiB granules: 10 MiB, the size NVIDIA/nccl issue #1685 logs
// (NCCL_DEBUG_SUBSYS=ALLOC: 10485760-byte allocations on 8 x H100).
constexpr double kLlBytes = 8.0 * 512 * 8 * 16;
constexpr double kLl128Bytes = 120.0 * 640 * 8 * 8;
constexpr double kSimpleBytes = 4 * kMiB;
constexpr double kCuMemGranule = 2 * kMiB;
// Ring channels of a collective communicator on 8-GPU NVSwitch nodes: NCCL logs 16 on H800
// (NVIDIA/nccl issue #892: "16 coll channels") and "Channel 00/16" rings over 8-NIC H100 nodes
// (issues #1453, #1538). A ring connects each GPU to one peer per channel, and the buffers of a
// connection live on one of its two ends: one connection per channel per GPU.
constexpr int kRingChannels = 16;
// Point-to-point: 32 channels per NVLink peer on H100 (issue #1685: "as many as 32 channels are
// created, per pair of GPUs"), 2 per network peer (NCCL_NCHANNELS_PER_NET_PEER, issue #1424).
// Per (peer, channel) the same issue measured (4.34 - 1.06) GB over 7 peers x 32 channels.
constexpr int kNvlinkP2pChannels = 32;
constexpr int kNetworkP2pChannels = 2;
constexpr double kP2pChannelBytes = (4.34e9 - 1.06e9) / (7 * 32);
// NVLS (src/transport/nvls.cc:155-160, 424-432): NVLS_NCHANNELS 16 on sm90 (32 on sm100) x 2 x
// NCCL_NVLS_CHUNKSIZE 128 KiB x 8 steps per NVLS head (one inside an island).
constexpr double kNvlsChunk = 128 * 1024.0;

// cuBLAS workspaces. PyTorch (aten/src/ATen/cuda/CublasHandlePool.cpp): CUBLAS_WORKSPACE_CONFIG
// ":4096:8" (32 MiB) on sm90 and later, ":4096:2:16:8" (8.125 MiB) before, and 1 MiB for
// cuBLASLt. Transformer Engine (transformer_engine/pytorch/cpp_extensions/gemm.py:37-66 at
// d0067d0): 32 MiB + 1 KiB on sm90 and later, 4 MiB before; three of them for userbuffer GEMMs
// (_NUM_MAX_UB_STREAMS), four for grouped GEMMs (tex.get_num_cublas_streams()).
constexpr int kUbStreams = 3;
constexpr int kGroupedGemmStreams = 4;

bool hopper_or_later(GpuArchitecture a) {
  return a == GpuArchitecture::kHopper || a == GpuArchitecture::kBlackwell;
}

// Rank stride of `dim` in the plan's placement (fastest-varying first).
int stride_of(const PlanSpec& plan, ParallelDim dim) {
  int stride = 1;
  for (ParallelDim d : full_placement(plan.placement)) {
    if (d == dim) return stride;
    switch (d) {
      case ParallelDim::kTensor:
        stride *= plan.tensor;
        break;
      case ParallelDim::kContext:
        stride *= plan.context;
        break;
      case ParallelDim::kData:
        stride *= plan.data;
        break;
      case ParallelDim::kPipeline:
        stride *= plan.pipeline;
        break;
    }
  }
  return stride;
}

}  // namespace

double nccl_ring_bytes(int channels) {
  const double connection = kLlBytes + kLl128Bytes + kSimpleBytes;
  return channels * std::ceil(connection / kCuMemGranule) * kCuMemGranule;
}

double nccl_p2p_bytes(int nvlink_peers, int network_peers) {
  return (nvlink_peers * kNvlinkP2pChannels + network_peers * kNetworkP2pChannels) *
         kP2pChannelBytes;
}

double userbuffer_bytes(double tokens, double hidden, bool fp8) {
  // transformer_engine/pytorch/module/base.py:335-360 (initialize_ub at d0067d0): twelve
  // communicators (qkv, proj, fc1, fc2 x fprop, dgrad, wgrad), each with one buffer of the shape
  // Megatron passes, [seq x micro-batch / cp, hidden] (M megatron/training/initialize.py:
  // 217-226); the eight all-gather ones are uint8 under FP8 (fp8_buf), the reduce-scatter
  // ones (proj_fprop, fc2_fprop, qkv_wgrad, fc1_wgrad) stay 16-bit. The pipelined
  // reduce-scatters hold one buffer of that shape (common/comm_gemm_overlap/
  // comm_gemm_overlap.cpp:418-425); the ring-exchange ones are all-gathers here (810-830).
  const double elems = tokens * hidden;
  return fp8 ? elems * (8 * 1 + 4 * 2) : elems * 12 * 2;
}

ReservedMemory reserved_memory(const ClusterSpec& cluster, const ModelSpec& model,
                               const PlanSpec& plan, int stage) {
  ReservedMemory r;
  if (cluster.gpu.memory_reserved_bytes >= 0) {
    r.user_override = cluster.gpu.memory_reserved_bytes;
    return r;
  }
  const GpuArchitecture arch = cluster.gpu.architecture;
  r.cuda_context = kCudaContextBytes;

  const int island = plan.gpus_per_island > 0 ? plan.gpus_per_island : cluster.nvlink.island_size;
  const auto in_island = [&](ParallelDim dim, int size) {
    return island > 0 && stride_of(plan, dim) * size <= island;
  };
  const int t = plan.tensor, cp = plan.context, d = plan.data, p = plan.pipeline;
  const int gpus = t * cp * d * p;
  const bool fp8 = plan.precision == Precision::kFp8;
  const double nvls = cluster.nvlink.in_switch_reduction_efficiency > 0
                          ? (arch == GpuArchitecture::kBlackwell ? 32 : 16) * 2 * kNvlsChunk * 8
                          : 0;

  // Collective communicators that carry traffic in a step (Megatron-Core parallel_state):
  // the default group (barriers), tensor, data x context (gradients), model-parallel
  // (gradient norm and inf checks), the tied embedding's first and last stage, FP8 delayed
  // scaling's amax group (tensor x data x context), and the expert-data-parallel group.
  int rings = 0;
  rings += gpus > 1;
  rings += t > 1;
  rings += d * cp > 1;
  rings += t * p > 1;
  rings += p > 1 && !model.untie_embeddings_and_output_weights && (stage == 0 || stage == p - 1);
  rings += fp8 && plan.fp8_recipe == Fp8Recipe::kDelayed && t * cp * d > 1;
  const bool experts_apart =
      model.moe() && (plan.expert_parallel > 1 || plan.expert_tensor() != plan.tensor);
  rings += experts_apart && plan.expert_data_parallel() > 1;
  r.nccl = rings * nccl_ring_bytes(kRingChannels);
  // In-switch reduction: a single-island all-reduce (TP without sequence parallelism, data
  // parallelism without the distributed optimizer) runs NVLS and maps its buffers.
  if (t > 1 && !plan.sequence_parallel && in_island(ParallelDim::kTensor, t)) r.nccl += nvls;
  // The data x context group spans its outer dimension's stride times that dimension's size.
  const int dp_cp_span = std::max(stride_of(plan, ParallelDim::kContext) * cp,
                                  stride_of(plan, ParallelDim::kData) * d);
  if (d * cp > 1 && !plan.distributed_optimizer && island > 0 && dp_cp_span <= island) {
    r.nccl += nvls;
  }

  // Point-to-point: pipeline neighbours, the context-parallel ring, the expert all-to-all.
  int nvlink_peers = 0, network_peers = 0;
  const auto peer = [&](bool nvlink) { ++(nvlink ? nvlink_peers : network_peers); };
  if (p > 1) {
    const long long pp = stride_of(plan, ParallelDim::kPipeline);
    const auto same_island = [&](int other) {
      return island > 0 && (stage * pp) / island == (other * pp) / island;
    };
    if (stage > 0) peer(same_island(stage - 1));
    if (stage < p - 1) peer(same_island(stage + 1));
  }
  if (cp > 1) {
    const bool nvlink = in_island(ParallelDim::kContext, cp);
    peer(nvlink);
    if (cp > 2) peer(nvlink);
  }
  if (model.moe() && plan.expert_parallel > 1) {
    // The expert group's ranks follow expert-tensor ranks: ep x etp consecutive GPUs.
    const int ep = plan.expert_parallel, etp = plan.expert_tensor();
    const int local = island > 0 ? std::clamp(island / etp, 1, ep) : 1;
    nvlink_peers += local - 1;
    network_peers += ep - local;
  }
  r.nccl += nccl_p2p_bytes(nvlink_peers, network_peers);

  if (plan.tp_comm_overlap && t > 1) {
    const double tokens = double(plan.micro_batch_size) * model.seq_length / cp;
    r.userbuffers = userbuffer_bytes(tokens, model.hidden_size, fp8);
  }

  const bool modern = hopper_or_later(arch);
  const double torch_ws = (modern ? 32 * kMiB : (4096.0 * 2 + 16 * 8) * 1024) + 1 * kMiB;
  const double te_ws = modern ? 32 * kMiB + 1024 : 4 * kMiB;
  r.workspaces = torch_ws + te_ws;
  if (plan.tp_comm_overlap && t > 1) r.workspaces += kUbStreams * te_ws;
  if (model.moe()) r.workspaces += kGroupedGemmStreams * te_ws;
  return r;
}

}  // namespace trident
