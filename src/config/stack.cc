#include "config/stack.h"

#include "config/map_reader.h"

namespace trident {

const char* elementwise_kernels_name(ElementwiseKernels e) {
  return e == ElementwiseKernels::kEager ? "eager" : "fused";
}

const char* stack_attention_name(StackAttention a) {
  return a == StackAttention::kSdpa ? "sdpa" : "te";
}

const char* selective_recompute_name(SelectiveRecompute s) {
  return s == SelectiveRecompute::kAlternateMatmuls ? "alternate_matmuls" : "attention_core";
}

StackSpec read_stack(const MapReader& map) {
  map.check_keys();
  StackSpec s;
  map.field([&] { s.name = *map.text("name"); });
  map.field([&] { s.description = map.text("description").value_or(""); });
  map.field([&] {
    s.elementwise = *map.text("elementwise") == "eager" ? ElementwiseKernels::kEager
                                                        : ElementwiseKernels::kFused;
  });
  map.field([&] {
    s.attention = *map.text("attention") == "sdpa" ? StackAttention::kSdpa
                                                   : StackAttention::kTransformerEngine;
  });
  map.field([&] { s.host_time_per_kernel_s = *map.number("host_time_per_kernel"); });
  map.field([&] { s.tp_grad_overlap = *map.flag("tp_grad_overlap"); });
  map.field([&] {
    s.selective_recompute = *map.text("selective_recompute") == "alternate_matmuls"
                                ? SelectiveRecompute::kAlternateMatmuls
                                : SelectiveRecompute::kAttentionCore;
  });
  map.field([&] {
    s.context_parallel = *map.text("context_parallel") == "torch"
                             ? CpImplementation::kTorch
                             : CpImplementation::kTransformerEngine;
  });
  return s;
}

}  // namespace trident
