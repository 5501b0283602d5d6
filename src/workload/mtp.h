// Multi-token prediction (model.mtp_num_layers; DeepSeek-V3's D = 1) as Megatron-Core runs it
// (megatron/core/transformer/multi_token_prediction.py, MultiTokenPredictionBlock and
// MultiTokenPredictionLayer): each depth embeds the tokens shifted by one more position with
// the model's (shared) embedding, normalizes them (enorm) and the hidden state it receives
// (hnorm), concatenates the two, projects 2h -> h (eh_proj, a column-parallel linear whose
// output is gathered over the TP group), runs one transformer layer of the decoder's last
// layer's kind (MLA and MoE for DeepSeek-V3), a final norm and the shared output layer with
// its own cross-entropy; its loss, scaled by mtp_loss_scaling_factor / mtp_num_layers, joins
// the main loss (process_mtp_loss). Pure: op lists, counts and closed forms.
#ifndef TRIDENT_WORKLOAD_MTP_H_
#define TRIDENT_WORKLOAD_MTP_H_

#include <vector>

#include "config/model.h"
#include "config/plan.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns whether the MTP layers' transformer layer has a MoE MLP: Megatron builds it from
// the decoder's last layer spec, and num_floating_point_operations counts it as MoE when the
// last layer is (megatron/training/training.py, last_layer_is_moe).
bool mtp_layer_is_moe(const ModelSpec& m);

// Returns the weights of one MTP depth that are its own (whole, not a TP shard): enorm, hnorm
// and the final norm, eh_proj (2h x h, no bias), and one transformer layer of the last
// layer's kind. The embedding and the output layer are the model's, shared.
double mtp_depth_params(const ModelSpec& m);
// Returns mtp_num_layers x mtp_depth_params (0 without multi-token prediction).
double mtp_params(const ModelSpec& m);
// Returns the MTP weights one token uses (its depths' MoE layers: the top-k routed experts).
double mtp_active_params(const ModelSpec& m);

// Returns the FLOPs Megatron-LM's num_floating_point_operations adds for multi-token
// prediction over one step of `batch_size` sequences: mtp_num_layers more transformer layers
// of the last layer's kind, 3 x 2 x (3h + 2h^2) per token and depth for the norms and
// eh_proj, and one more logits GEMM per depth. 0 without multi-token prediction.
double mtp_megatron_flops(const ModelSpec& m, double batch_size);

// Returns the virtual stage holding the MTP layers: plan.mtp_virtual_stage (the layout's 'm'),
// else the last, with the loss (get_mtp_num_layers_to_build without a layout). -1 without
// multi-token prediction.
int mtp_virtual_stage(const ModelSpec& m, const PlanSpec& p);

// Returns the forward kernels of one depth before its transformer layer, on one TP rank: the
// shifted tokens' embedding (embedding_forward_ops; not when `embedding` is false, as a
// recomputation re-runs the rest only), enorm and hnorm, the concatenation, eh_proj (under
// sequence parallelism after an all-gather of its 2h-wide input) and the all-gather of its
// h / t-wide output (gather_from_tensor_model_parallel_region).
std::vector<Op> mtp_head_forward_ops(const LayerDims& d, bool embedding = true);
// Returns the backward kernels of the same: (under sequence parallelism the all-gather that
// undoes the output's scatter), eh_proj's input gradient with its reduction over the TP group
// (reduce-scatter under sequence parallelism, else all-reduce, beside the weight gradient),
// the norms' backward and the embedding's.
std::vector<Op> mtp_head_backward_ops(const LayerDims& d);

// Returns the activation bytes one depth keeps per micro-batch besides its transformer layer's
// (`layer_bytes`, added): the norms' inputs (hidden state and embedding), eh_proj's 2h-wide
// input at `linear_input_bytes` per element (its FP8 / NVFP4 copy under low precision), the
// final norm's input and the fp32 softmax of its logits (tokens x vocab / t x 4 B), each on
// the rank's tokens (/ t under sequence parallelism for the h-wide ones). Under full
// recomputation the depth keeps its two inputs and its logits only.
double mtp_depth_activation_bytes(const ModelSpec& m, const PlanSpec& p, double layer_bytes,
                                  double linear_input_bytes);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_MTP_H_
