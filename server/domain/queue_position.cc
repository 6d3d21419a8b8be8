#include "server/domain/queue_position.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace mculab::server {
namespace {

// What Fits reads of a job, compared by value.
struct Shape {
  const QueuedJob* job;
  bool operator<(const Shape& o) const {
    const QueuedJob& a = *job;
    const QueuedJob& b = *o.job;
    return std::tie(a.kind, a.board, a.custom_runner, a.tags) <
           std::tie(b.kind, b.board, b.custom_runner, b.tags);
  }
};

}  // namespace

std::vector<std::uint32_t> QueuePositions(std::span<const QueuedJob* const> queue,
                                          std::span<const BoardSlot> boards,
                                          std::span<const JobId> wanted) {
  std::vector<std::uint32_t> out(wanted.size(), 0);
  if (wanted.empty()) return out;
  const JobId last = *std::max_element(wanted.begin(), wanted.end());
  std::map<JobId, std::vector<std::size_t>> asked;  // id -> its indexes in `wanted`
  for (std::size_t i = 0; i < wanted.size(); ++i) asked[wanted[i]].push_back(i);

  // The shape of every job up to the last one asked about.
  std::map<Shape, std::size_t> shape_index;
  std::vector<const QueuedJob*> shapes;  // one job of each shape
  std::vector<std::size_t> shape_of;
  for (const QueuedJob* j : queue) {
    if (j->id > last) break;
    auto [it, added] = shape_index.try_emplace(Shape{j}, shapes.size());
    if (added) shapes.push_back(j);
    shape_of.push_back(it->second);
  }

  // competes[a][s]: a job of shape s fits a board that a job of shape a fits (a: asked shapes).
  std::map<std::size_t, std::vector<bool>> competes;
  auto competing = [&](std::size_t a) -> const std::vector<bool>& {
    auto [it, added] = competes.try_emplace(a);
    if (added) {
      std::vector<const BoardSlot*> mine;
      for (const BoardSlot& b : boards) {
        if (Fits(*shapes[a], b)) mine.push_back(&b);
      }
      it->second.resize(shapes.size());
      for (std::size_t s = 0; s < shapes.size(); ++s) {
        it->second[s] = std::any_of(mine.begin(), mine.end(),
                                    [&](const BoardSlot* b) { return Fits(*shapes[s], *b); });
      }
    }
    return it->second;
  };

  std::vector<std::uint32_t> ahead_of_shape(shapes.size(), 0);  // jobs seen so far, per shape
  for (std::size_t k = 0; k < shape_of.size(); ++k) {
    const QueuedJob* j = queue[k];
    if (auto a = asked.find(j->id); a != asked.end()) {
      const std::vector<bool>& c = competing(shape_of[k]);
      std::uint32_t ahead = 0;
      for (std::size_t s = 0; s < shapes.size(); ++s) {
        if (c[s]) ahead += ahead_of_shape[s];
      }
      for (std::size_t i : a->second) out[i] = ahead + 1;
    }
    ++ahead_of_shape[shape_of[k]];
  }
  return out;
}

}  // namespace mculab::server
