#include "workload/pass_segments.h"

#include "workload/tp_overlap.h"

namespace trident {

void append_ops(const std::vector<Op>& ops, const PassTiming& cm, int tensor, int layer,
                Pass* pass) {
  if (pass->segments.empty()) pass->segments.emplace_back();
  double last_op_s = 0;  // the op just appended to the open segment's compute
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    pass->flops += op.flops();
    pass->model_flops += op.model_flops();
    if (op.kind == OpKind::kCpTransfer || op.cp_ring) {
      // The ring runs before the segment's compute: start a segment if compute came first.
      const Segment& last = pass->segments.back();
      if (last.compute_s > 0 || last.grad_params > 0) pass->segments.emplace_back();
      Segment& seg = pass->segments.back();
      seg.layer = layer;
      if (op.kind == OpKind::kCpTransfer) {
        seg.ring.push_back({op.bytes, 0});
        pass->ring_steps += 1;
        pass->cp_bytes += op.bytes;
        // A transfer beside the block after it (an exposed one, e.g. all-to-all, runs alone).
        if (op.overlaps_next && i + 1 < ops.size() && ops[i + 1].kind == OpKind::kAttention) {
          const Op& block = ops[++i];
          pass->flops += block.flops();
          pass->model_flops += block.model_flops();
          seg.ring.back().compute_s = timed_op(block, cm, pass);
          pass->compute_s += seg.ring.back().compute_s;
        }
      } else if (op.kind == OpKind::kMemory && !seg.ring.empty()) {
        // A block's softmax correction or merge runs in its ring step (cp_attention.h).
        const double t = timed_op(op, cm, pass);
        seg.ring.back().compute_s += t;
        pass->compute_s += t;
      } else {
        seg.ring.push_back({0, timed_op(op, cm, pass)});
        pass->compute_s += seg.ring.back().compute_s;
      }
      continue;
    }
    const bool expert = op.kind == OpKind::kEpCollective;
    if (op.kind != OpKind::kTpCollective && !expert) {
      last_op_s = timed_op(op, cm, pass);
      pass->segments.back().compute_s += last_op_s;
      pass->compute_s += last_op_s;
      continue;
    }
    if (!expert && tensor == 1) continue;
    Segment& seg = pass->segments.back();
    seg.tp_bytes = op.bytes;
    seg.tp_op = op.collective;
    seg.layer = layer;
    seg.expert = expert;
    seg.combine = op.combine;
    pass->collectives += expert ? 0 : 1;
    pass->tp_bytes += expert ? 0 : op.bytes;
    pass->ep_collectives += expert ? 1 : 0;
    pass->ep_bytes += expert ? op.bytes : 0;
    const auto is_collective = [](const Op& o) {
      return o.kind == OpKind::kTpCollective || o.kind == OpKind::kEpCollective ||
             o.kind == OpKind::kCpTransfer || o.cp_ring;
    };
    // Times the next op inside this segment's collective: it runs beside it.
    const auto overlap_next = [&]() -> const Op& {
      const Op& next = ops[++i];
      pass->flops += next.flops();
      pass->model_flops += next.model_flops();
      const double t = timed_op(next, cm, pass);
      seg.overlap_s += t;
      pass->compute_s += t;
      return next;
    };
    const TpOverlap method = cm.tp_overlap ? op.userbuffers : TpOverlap::kNone;
    if (method == TpOverlap::kPipeline) {
      seg.compute_s -= last_op_s;
      seg.overlap_s = last_op_s;
      seg.tp_splits = kPipelineSplits;
    } else if (method == TpOverlap::kRingExchange) {
      // The GEMM (and an FP8 cast before it) consumes the gathered chunks.
      while (i + 1 < ops.size() && ops[i + 1].kind != OpKind::kTpCollective) {
        const Op& next = overlap_next();
        if (next.kind == OpKind::kGemm && next.linear) break;
      }
    } else if (op.overlaps_next && cm.tp_grad_overlap) {
      for (int n = 0; n < op.overlap_ops && i + 1 < ops.size() && !is_collective(ops[i + 1]); ++n) {
        overlap_next();
      }
    }
    seg.tp_overlap = method;
    seg.overlap_stretch = userbuffers_gemm_stretch(method, cm.arch);
    last_op_s = 0;
    pass->segments.emplace_back();
  }
}

void weights_needed(double params, double expert_params, Pass* pass) {
  if (pass->segments.empty() || pass->segments.back().compute_s > 0 ||
      pass->segments.back().tp_bytes > 0) {
    pass->segments.emplace_back();
  }
  pass->segments.back().weight_params += params;
  pass->segments.back().expert_weight_params += expert_params;
}

void grads_done(double params, double expert_params, Pass* pass) {
  if (pass->segments.empty()) pass->segments.emplace_back();
  pass->segments.back().grad_params += params;
  pass->segments.back().expert_grad_params += expert_params;
  pass->segments.emplace_back();
}

void finish_pass(Pass* pass) {
  while (pass->segments.size() > 1 && pass->segments.back().compute_s == 0 &&
         pass->segments.back().tp_bytes == 0 && pass->segments.back().grad_params == 0 &&
         pass->segments.back().ring.empty()) {
    pass->segments.pop_back();
  }
}

}  // namespace trident
