#include "report/svg_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/utf8.h"
#include "report/plan_label.h"

namespace trident {
namespace {

// What a box shows. The first three fill the main lane of a row, the rest its strip.
enum Cls { kF, kB, kOpt, kP2p, kTp, kDp, kClasses };

const char* const kForwardShades[] = {"#4c78c8", "#9dbbe8", "#2a4f8f", "#7497d6"};
const char* const kBackwardShades[] = {"#4caf50", "#a3d9a5", "#2e7d32", "#79c47c"};
constexpr const char* kOptimizer = "#f2b134";
constexpr const char* kP2pColour = "#f28e2b";
constexpr const char* kTpColour = "#d62728";
constexpr const char* kDpColour = "#9467bd";
constexpr const char* kMixed = "#3f9f9f";  // forwards and backwards merged together
constexpr const char* kIdle = "#e4e4e4";
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";

struct Box {
  double x0, x1;  // pixels
  Cls cls;
  int chunk, mb;
};

// Boxes merged for drawing: one box, or a run of boxes too narrow to show apart.
struct Group {
  double x0, x1;
  int chunk, mb, count;
  std::array<double, kClasses> px{};  // pixels covered per class
};

// Escapes markup, after making `raw` valid XML text (UTF-8, no control characters).
std::string xml_escape(const std::string& raw) {
  const std::string s = sanitize_utf8(raw);
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// Merges each box into the group before it when either is narrower than `min_px` and the gap
// between them is too.
std::vector<Group> merge(const std::vector<Box>& boxes, double min_px) {
  std::vector<Group> out;
  for (const Box& b : boxes) {
    if (!out.empty()) {
      Group& g = out.back();
      const bool tiny = g.x1 - g.x0 < min_px || b.x1 - b.x0 < min_px;
      if (tiny && b.x0 - g.x1 < min_px) {
        g.x1 = std::max(g.x1, b.x1);
        g.px[b.cls] += b.x1 - b.x0;
        if (g.chunk != b.chunk) g.chunk = -1;
        ++g.count;
        continue;
      }
    }
    Group g{b.x0, b.x1, b.chunk, b.mb, 1};
    g.px[b.cls] = b.x1 - b.x0;
    out.push_back(g);
  }
  return out;
}

// Returns the fill of model chunk `chunk` of `chunks`: the palette's shades up to four chunks,
// beyond them one lightness step per chunk of the palette's hue, so no two chunks share one.
std::string shade(const char* const* shades, int chunk, int chunks) {
  chunk = std::max(chunk, 0);
  if (chunks <= 4) return shades[chunk % 4];
  const int hue = shades == kForwardShades ? 218 : 123;
  const double lightness = 28 + 50.0 * chunk / std::max(chunks - 1, 1);
  return fmt::format("hsl({},{}%,{:.0f}%)", hue, 50, lightness);
}

bool mixed(const Group& g) { return g.count > 1 && g.px[kF] > 0 && g.px[kB] > 0; }

// A merged run is drawn as opaque as the share of it its boxes cover, so sparse traffic does
// not read as a solid band.
std::string opacity_of(const Group& g) {
  double covered = 0;
  for (double px : g.px) covered += px;
  const double share = g.x1 > g.x0 ? covered / (g.x1 - g.x0) : 1;
  if (g.count == 1 || share >= 0.95) return "";
  return fmt::format(" fill-opacity=\"{:.2f}\"", std::max(share, 0.3));
}

// Returns the fill of a group and, through *cls, its dominant class.
std::string fill_of(const Group& g, int chunks, Cls* cls) {
  if (mixed(g)) {
    *cls = kF;
    return kMixed;
  }
  int best = 0;
  for (int c = 1; c < kClasses; ++c) {
    if (g.px[c] > g.px[best]) best = c;
  }
  *cls = static_cast<Cls>(best);
  switch (*cls) {
    case kF:
      return shade(kForwardShades, g.chunk, chunks);
    case kB:
      return shade(kBackwardShades, g.chunk, chunks);
    case kOpt:
      return kOptimizer;
    case kP2p:
      return kP2pColour;
    case kTp:
      return kTpColour;
    case kDp:
      return kDpColour;
    case kClasses:
      break;
  }
  return kIdle;
}

// A round tick step (1, 2 or 5 times a power of ten) giving about eight ticks over `span`.
double tick_step(double span) {
  const double raw = span / 8;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::string number(double value, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", value, decimals);
}

// The rows to draw: the actor of each stage at data and context rank 0, lowest tensor rank.
std::vector<const ActorTimeline*> stage_rows(const Timeline& tl, int stages) {
  std::vector<const ActorTimeline*> rows(stages, nullptr);
  for (const ActorTimeline& a : tl.actors) {
    if (a.data_rank != 0 || a.context_rank != 0 || a.stage < 0 || a.stage >= stages) continue;
    const ActorTimeline*& r = rows[a.stage];
    if (r == nullptr || a.tensor_rank < r->tensor_rank) r = &a;
  }
  return rows;
}

struct Lanes {
  std::vector<Box> main, strip;
};

Lanes lanes_of(const ActorTimeline& a, double x0, double px_per_s) {
  Lanes l;
  for (const Interval& iv : a.intervals) {
    Box b{x0 + iv.start * px_per_s, x0 + iv.end * px_per_s, kF, iv.chunk, iv.microbatch};
    switch (iv.kind) {
      case IntervalKind::kForward:
        b.cls = kF;
        break;
      case IntervalKind::kBackward:
        b.cls = kB;
        break;
      case IntervalKind::kOptimizer:
      case IntervalKind::kHostOptimizer:  // the rest of the step, on the host
        b.cls = kOpt;
        break;
      case IntervalKind::kPpComm:
      case IntervalKind::kCpComm:  // point to point as well, between context ranks
        b.cls = kP2p;
        break;
      case IntervalKind::kTpComm:
        // Closed-form collectives lie inside their (fused) pass's box already.
        if (iv.tp == TpTiming::kClosedForm) continue;
        b.cls = kTp;
        break;
      case IntervalKind::kDpComm:
      case IntervalKind::kEpComm:  // drawn with the data-parallel traffic it crosses
        b.cls = kDp;
        break;
      case IntervalKind::kPpWait:
        continue;  // idle: the row's background shows through
    }
    if (b.x1 <= b.x0) continue;
    (b.cls <= kOpt ? l.main : l.strip).push_back(b);
  }
  auto by_start = [](const Box& x, const Box& y) {
    return x.x0 < y.x0 || (x.x0 == y.x0 && x.x1 < y.x1);
  };
  std::stable_sort(l.main.begin(), l.main.end(), by_start);
  std::stable_sort(l.strip.begin(), l.strip.end(), by_start);
  return l;
}

}  // namespace

std::string format_svg_timeline(const Scenario& sc, const Timeline& tl,
                                const SvgTimelineOptions& opt) {
  const PlanSpec& plan = sc.plan;
  const int p = plan.pipeline;
  const double step = tl.step_time_s > 0 ? tl.step_time_s : 1e-9;
  const int width = std::max(opt.width, 400);
  const double left = 78, right = 24;
  const double plot_w = width - left - right;
  const double px_per_s = plot_w / step;
  const double pitch = std::clamp(std::floor(720.0 / p), 11.0, 40.0);
  const double main_h = std::round(pitch * 0.6), strip_h = std::max(2.0, std::round(pitch * 0.2));
  const double font = std::min(11.0, main_h - 4);
  const double row_font = std::min(12.0, pitch * 0.75);

  const std::vector<const ActorTimeline*> rows = stage_rows(tl, p);
  std::vector<Lanes> lanes;
  for (const ActorTimeline* a : rows) lanes.push_back(a ? lanes_of(*a, left, px_per_s) : Lanes{});

  // Merge until the drawing fits the element budget.
  double min_px = opt.min_box_px;
  std::vector<std::vector<Group>> main_groups, strip_groups;
  for (int attempt = 0; attempt < 24; ++attempt) {
    main_groups.clear();
    strip_groups.clear();
    size_t elements = 0;
    for (const Lanes& l : lanes) {
      main_groups.push_back(merge(l.main, min_px));
      strip_groups.push_back(merge(l.strip, min_px));
      elements += 2 * main_groups.back().size() + strip_groups.back().size();
    }
    if (elements <= static_cast<size_t>(std::max(opt.max_elements, 1))) break;
    min_px *= 2;
  }

  // Legend: every chunk of an interleaved schedule has its own colour, named; the items wrap
  // into rows, and the plot starts below the last.
  const int v = std::max(plan.virtual_stages, 1);
  struct Item {
    std::string colour;
    std::string label;
  };
  std::vector<Item> legend = {{kForwardShades[0], "forward (F)"},
                              {kBackwardShades[0], "backward (B)"}};
  if (v > 1) {
    legend.clear();
    for (int c = 0; c < v; ++c)
      legend.push_back({shade(kForwardShades, c, v), fmt::format("F chunk {}", c)});
    for (int c = 0; c < v; ++c)
      legend.push_back({shade(kBackwardShades, c, v), fmt::format("B chunk {}", c)});
  }
  bool any_mixed = false;
  for (const auto& row : main_groups) {
    for (const Group& g : row) any_mixed = any_mixed || mixed(g);
  }
  if (any_mixed) legend.push_back({kMixed, "F+B too small to tell apart"});
  legend.insert(legend.end(), {{kOptimizer, "optimizer"},
                               {kP2pColour, "pipeline transfer"},
                               {kTpColour, "TP collective"},
                               {kDpColour, "DP reduction"},
                               {kIdle, "idle (bubble)"}});
  std::string legend_svg;
  double lx = left, ly = 54;
  for (const Item& it : legend) {
    const double item_w = 18 + 6.3 * it.label.size() + 16;
    if (lx > left && lx + item_w > width - right) {
      lx = left;
      ly += 18;
    }
    legend_svg += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"14\" height=\"11\" fill=\"{}\" stroke=\"#888\" "
        "stroke-width=\"0.5\"/><text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"11\">{}</text>\n",
        lx, ly, it.colour, lx + 18, ly + 10, xml_escape(it.label));
    lx += item_w;
  }
  const double top = ly + 28;
  const double axis_y = top + p * pitch + 2;
  const double height = axis_y + 44;

  std::string o;
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0} {1:.0f}\" font-family=\"{2}\">\n",
      width, height, kFont);
  o += fmt::format("<rect width=\"{}\" height=\"{:.0f}\" fill=\"#ffffff\"/>\n", width, height);
  std::string title =
      fmt::format("{} on {}: {}, {}, {} micro-batches", sc.model.name, sc.cluster.name,
                  schedule_name(plan.schedule), plan_label(plan), plan.num_microbatches);
  if (v > 1) title += fmt::format(", {} chunks per GPU", v);
  const double step_ms = tl.step_time_s * 1e3;
  title += fmt::format(" \u2014 step {} ms", number(step_ms, step_ms >= 10 ? 0.1 : 0.001));
  o += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   left, xml_escape(title));
  o += fmt::format(
      "<text x=\"{}\" y=\"40\" font-size=\"11\" fill=\"#444\">One row per pipeline stage "
      "(data-parallel rank 0). Boxes: forward and backward passes, labelled with the "
      "micro-batch (from 0); thin strip: communication the GPU waits on; grey: idle "
      "(bubble).</text>\n",
      left);
  o += legend_svg;

  // Grid and time axis (ms).
  const double tick = tick_step(step_ms);
  o += "<g stroke=\"#cfcfcf\" stroke-width=\"0.6\">\n";
  for (int k = 0; k * tick <= step_ms * (1 + 1e-9); ++k) {
    const double x = left + k * tick * 1e-3 * px_per_s;
    o += fmt::format("<line x1=\"{0:.2f}\" y1=\"{1:.0f}\" x2=\"{0:.2f}\" y2=\"{2:.0f}\"/>\n", x,
                     top - 4, axis_y + 4);
  }
  o += "</g>\n<g font-size=\"10\" text-anchor=\"middle\" fill=\"#333\">\n";
  for (int k = 0; k * tick <= step_ms * (1 + 1e-9); ++k) {
    o += fmt::format("<text x=\"{:.2f}\" y=\"{:.0f}\">{}</text>\n",
                     left + k * tick * 1e-3 * px_per_s, axis_y + 16, number(k * tick, tick));
  }
  o += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"11\">time (ms)</text>\n</g>\n",
                   left + plot_w / 2, axis_y + 34);

  // Rows.
  for (int s = 0; s < p; ++s) {
    const double y = top + s * pitch;
    o += fmt::format(
        "<text x=\"{:.0f}\" y=\"{:.1f}\" font-size=\"{:.0f}\" text-anchor=\"end\" "
        "dominant-baseline=\"central\">stage {}</text>\n",
        left - 8, y + main_h / 2, row_font, s);
    o += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", left,
        y, plot_w, main_h + 1 + strip_h, kIdle);
    for (const Group& g : main_groups[s]) {
      Cls cls;
      const std::string fill = fill_of(g, v, &cls);
      o += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"{}{}/>\n",
          g.x0, y, g.x1 - g.x0, main_h, fill, opacity_of(g),
          g.count == 1 && g.x1 - g.x0 >= 4 ? " stroke=\"#ffffff\" stroke-width=\"0.5\"" : "");
      const std::string label = std::to_string(g.mb);
      const bool pass = g.count == 1 && (cls == kF || cls == kB) && g.mb >= 0;
      // The label shrinks to fit its box, down to 7 px; below that it is dropped.
      const double fit = std::floor(std::min(font, (g.x1 - g.x0 - 3) / (label.size() * 0.62)));
      if (pass && fit >= 7) {
        const bool light = g.chunk % 2 == 1;
        o += fmt::format(
            "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"{:.0f}\" text-anchor=\"middle\" "
            "dominant-baseline=\"central\" fill=\"{}\">{}</text>\n",
            (g.x0 + g.x1) / 2, y + main_h / 2, fit, light ? "#000000" : "#ffffff", label);
      }
    }
    for (const Group& g : strip_groups[s]) {
      Cls cls;
      const std::string fill = fill_of(g, v, &cls);
      o += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"{}/>\n",
          g.x0, y + main_h + 1, std::max(g.x1 - g.x0, 0.5), strip_h, fill, opacity_of(g));
    }
  }
  o += "</svg>\n";
  return o;
}

}  // namespace trident
