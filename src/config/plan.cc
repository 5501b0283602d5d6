#include "config/plan.h"

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

const char* parallel_dim_name(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTensor:
      return "tensor";
    case ParallelDim::kData:
      return "data";
    case ParallelDim::kPipeline:
      return "pipeline";
  }
  return "?";
}

bool parse_parallel_dim(const std::string& name, ParallelDim* out) {
  for (ParallelDim d : {ParallelDim::kTensor, ParallelDim::kData, ParallelDim::kPipeline}) {
    if (name == parallel_dim_name(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

}  // namespace trident
