// ImageLocality: tables follow upstream's imagelocality/image_locality_test.go
// (TestImageLocalityPriority, TestNormalizedImageName), same images, sizes
// and expected scores; plus the Cache's image bookkeeping.
#include <doctest/doctest.h>

#include "toysched/sched/cache.hpp"
#include "toysched/sched/plugins/image_locality.hpp"

#include <string>
#include <vector>

using namespace toysched;

namespace {

constexpr std::int64_t kMB = 1024 * 1024;

kube::Node image_node(std::string name, std::vector<kube::ContainerImage> images) {
  kube::Node n;
  n.name = std::move(name);
  n.uid = "uid-" + n.name;
  n.allocatable.milli_cpu = 4000;
  n.allocatable.memory = std::int64_t{32} << 30;
  n.allocatable.pods = 110;
  n.images = std::move(images);
  return n;
}

// upstream's node status fixtures, by name
const kube::Node& fixture(const std::string& which) {
  static const std::vector<kube::Node> all = {
      image_node("node403002000", {{{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40 * kMB},
                                   {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * kMB},
                                   {{"gcr.io/2000:latest"}, 2000 * kMB}}),
      image_node("node25010", {{{"gcr.io/250:latest"}, 250 * kMB}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * kMB}}),
      image_node(
          "node60040900",
          {{{"gcr.io/600:latest"}, 600 * kMB}, {{"gcr.io/40:latest"}, 40 * kMB}, {{"gcr.io/900:latest"}, 900 * kMB}}),
      image_node(
          "node300600900",
          {{{"gcr.io/300:latest"}, 300 * kMB}, {{"gcr.io/600:latest"}, 600 * kMB}, {{"gcr.io/900:latest"}, 900 * kMB}}),
      image_node("node400030", {{{"gcr.io/4000:latest"}, 4000 * kMB}, {{"gcr.io/30:latest"}, 30 * kMB}}),
      image_node("nodeWithNoImages", {}),
  };
  for (const auto& n : all) {
    if (n.name == which) return n;
  }
  FAIL("no fixture " << which);
  return all.front();
}

// The scores ImageLocality gives `images` on these nodes, the nodes added
// to a Cache as the informer would (named node1, node2, ...).
std::vector<std::int64_t> scores(std::vector<std::string> images, const std::vector<std::string>& nodes) {
  sched::Cache cache;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    kube::Node n = fixture(nodes[i]);
    n.name = "node" + std::to_string(i + 1);
    cache.add_node(n);
  }
  kube::Pod pod;
  pod.images = std::move(images);
  sched::ImageLocality plugin;
  const sched::Cluster cluster = cache.cluster();
  std::vector<std::int64_t> out(cluster.nodes.size(), -1);
  if (!plugin.pre_score(pod, cluster.nodes, cluster)) {
    std::fill(out.begin(), out.end(), 0);  // skipped: 0 everywhere
    return out;
  }
  plugin.score(pod, cluster.nodes, out);
  return out;
}

using Scores = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("TestImageLocalityPriority cases") {
  SUBCASE("two images spread on two nodes, prefer the larger image one") {
    CHECK(scores({"gcr.io/40", "gcr.io/250"}, {"node403002000", "node25010"}) == Scores{0, 5});
  }
  SUBCASE("two images on one node, prefer this node") {
    CHECK(scores({"gcr.io/40", "gcr.io/300"}, {"node403002000", "node25010"}) == Scores{7, 0});
  }
  SUBCASE("if exceed limit, use limit") {
    CHECK(scores({"gcr.io/10", "gcr.io/4000"}, {"node400030", "node25010"}) == Scores{100, 0});
  }
  SUBCASE("if exceed limit, use limit (with node which has no images present)") {
    CHECK(scores({"gcr.io/10", "gcr.io/4000"}, {"node400030", "node25010", "nodeWithNoImages"}) == Scores{66, 0, 0});
  }
  SUBCASE("pod with multiple large images, node2 is preferred") {
    CHECK(scores({"gcr.io/300", "gcr.io/600", "gcr.io/900"}, {"node60040900", "node300600900", "nodeWithNoImages"}) ==
          Scores{32, 36, 0});
  }
  SUBCASE("no node has the image: the plugin is skipped") {
    CHECK(scores({"gcr.io/nowhere"}, {"node400030", "node25010"}) == Scores{0, 0});
  }
}

TEST_CASE("TestNormalizedImageName cases") {
  CHECK(sched::normalized_image_name("root") == "root:latest");
  CHECK(sched::normalized_image_name("gcr.io:5000/root") == "gcr.io:5000/root:latest");
  CHECK(sched::normalized_image_name("root:tag") == "root:tag");
  CHECK(sched::normalized_image_name("root@sha256:0123") == "root@sha256:0123");
}

TEST_CASE("the cache counts each image once per node, and forgets nodes that go") {
  sched::Cache cache;
  cache.add_node(image_node("a", {{{"img:1", "img:1"}, 100}}));  // listed twice on one node
  cache.add_node(image_node("b", {{{"img:1"}, 999}}));
  const sched::Cluster c = cache.cluster();
  REQUIRE(c.images != nullptr);
  REQUIRE(c.images->find("img:1") != nullptr);
  CHECK(c.images->find("img:1")->nodes == 2);
  CHECK(c.images->find("img:1")->size == 100);  // the first node's size, as upstream
  cache.update_node(image_node("b", {}));       // b's image was removed
  CHECK(c.images->find("img:1")->nodes == 1);
  cache.remove_node("a");
  CHECK(c.images->find("img:1") == nullptr);
  CHECK(cache.node("b")->image_hashes.empty());
}
