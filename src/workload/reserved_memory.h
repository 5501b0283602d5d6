// HBM a training GPU uses besides the model's tensors: the CUDA context, the NCCL
// communicators the plan creates, Transformer Engine's userbuffers and the GEMM workspaces.
// Each term follows from the plan and the cluster (docs/memory.md, "The reserve").
#ifndef TRIDENT_WORKLOAD_RESERVED_MEMORY_H_
#define TRIDENT_WORKLOAD_RESERVED_MEMORY_H_

#include "config/cluster.h"
#include "config/model.h"
#include "config/plan.h"

namespace trident {

// Bytes per GPU. `workspaces` are tensors of PyTorch's caching allocator (they count in
// torch.cuda.max_memory_allocated); the others are allocated outside it (cudaMalloc / cuMem by
// the CUDA driver, NCCL and userbuffers), so only nvidia-smi sees them.
struct ReservedMemory {
  double cuda_context = 0;  // CUDA context and the kernel modules a training step loads
  double nccl = 0;          // NCCL buffers of every communicator the step uses
  double userbuffers = 0;   // Transformer Engine's TP-overlap buffers (tp_comm_overlap)
  double workspaces = 0;    // cuBLAS / cuBLASLt workspaces of PyTorch and Transformer Engine
  // gpu.memory_reserved given: the whole reserve, in place of the terms above.
  double user_override = 0;
  double outside_allocator() const { return cuda_context + nccl + userbuffers; }
  double total() const {
    return user_override > 0 ? user_override : outside_allocator() + workspaces;
  }
};

// Returns what one GPU of pipeline stage `stage` holds besides the model's tensors, or the
// user's gpu.memory_reserved when given. Requires a validated scenario's specs, 0 <= stage <
// plan.pipeline.
ReservedMemory reserved_memory(const ClusterSpec& cluster, const ModelSpec& model,
                               const PlanSpec& plan, int stage);

// NCCL buffers of one communicator whose collectives run as rings over `channels` channels:
// one connection's LL, LL128 and Simple buffers per channel, rounded to the 2 MiB granule NCCL's
// cuMem allocations take (10 MiB on H100).
double nccl_ring_bytes(int channels);
// NCCL buffers of point-to-point traffic (send/recv, all-to-all) with `nvlink_peers` peers in
// the GPU's NVLink island and `network_peers` beyond it.
double nccl_p2p_bytes(int nvlink_peers, int network_peers);
// Userbuffers of Transformer Engine's TP overlap for a layer input of `tokens` x `hidden`:
// twelve buffers of that size, the all-gather ones in FP8 when `fp8`.
double userbuffer_bytes(double tokens, double hidden, bool fp8);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_RESERVED_MEMORY_H_
