// The pipeline schedule of a simulated step as an SVG Gantt chart, drawn like the figures of the
// Megatron-LM papers: one row per pipeline stage (the actor of data-parallel rank 0 and tensor
// rank 0, or its TP group), forward and backward boxes in two colours (one shade per model
// chunk) labelled with the micro-batch number (from 0), a thin strip under each row for the
// communication the GPU waits on (pipeline transfers, TP collectives when simulated, the DP
// reduction), idle time (the bubble) left grey, and a time axis in ms. Pure; no SimGrid.
//
// It stays legible from a few boxes to tens of thousands: a box too narrow for its label loses
// the label; runs of boxes too narrow to see apart merge into one box (in their kind's colour,
// or the "F+B" colour when forwards and backwards mix); and if the drawing would still exceed
// `max_elements`, the merge width doubles until it does not. Output depends only on the inputs.
#ifndef TRIDENT_REPORT_SVG_TIMELINE_H_
#define TRIDENT_REPORT_SVG_TIMELINE_H_

#include <string>

#include "config/scenario.h"
#include "lowering/timeline.h"

namespace trident {

struct SvgTimelineOptions {
  int width = 1400;          // pixels
  int max_elements = 20000;  // boxes and labels, at most (approximately: plus a fixed frame)
  double min_box_px = 3;     // boxes narrower than this merge with their neighbours
};

// Returns an SVG document of `timeline` (simulated for `scenario`, with intervals recorded).
std::string format_svg_timeline(const Scenario& scenario, const Timeline& timeline,
                                const SvgTimelineOptions& options = {});

}  // namespace trident

#endif  // TRIDENT_REPORT_SVG_TIMELINE_H_
