#include "tools/serve/selectors.h"

#include <catch2/catch.hpp>

#include "tools/serve/api_error.h"

using ledger::serve::ApiError;
using ledger::serve::FieldSelector;
using ledger::serve::LabelSelector;
using nlohmann::json;

TEST_CASE("label selectors match as apimachinery's labels.Parse reads them") {
  const json labels = {{"app", "train"}, {"tier", "gpu"}};
  CHECK(LabelSelector::parse("").matches(labels));
  CHECK(LabelSelector::parse("app=train").matches(labels));
  CHECK(LabelSelector::parse("app==train").matches(labels));
  CHECK_FALSE(LabelSelector::parse("app=infer").matches(labels));
  CHECK(LabelSelector::parse("app!=infer").matches(labels));
  CHECK(LabelSelector::parse("app!=infer").matches(json(nullptr)));  // absent differs
  CHECK(LabelSelector::parse("app in (infer, train),tier").matches(labels));
  CHECK_FALSE(LabelSelector::parse("app notin (train)").matches(labels));
  CHECK(LabelSelector::parse("!owner").matches(labels));
  CHECK_FALSE(LabelSelector::parse("!app").matches(labels));
  CHECK_FALSE(LabelSelector::parse("tier=gpu,app=infer").matches(labels));
  CHECK_FALSE(LabelSelector::parse("owner").matches(json(nullptr)));
}

TEST_CASE("malformed label selectors are 400 naming the selector") {
  for (const char* bad : {"app in (a", "app)", "=x", "app sortof (a)", "a b c"}) {
    INFO(bad);
    try {
      (void)LabelSelector::parse(bad);
      FAIL("accepted");
    } catch (const ApiError& e) {
      CHECK(e.code() == 400);
      CHECK(std::string(e.what()).find("labelSelector") != std::string::npos);
    }
  }
}

TEST_CASE("field selectors take metadata.name and metadata.namespace only") {
  CHECK(FieldSelector::parse("metadata.name=a").matches("ns", "a"));
  CHECK_FALSE(FieldSelector::parse("metadata.name=a").matches("ns", "b"));
  CHECK(FieldSelector::parse("metadata.namespace==ns,metadata.name!=b").matches("ns", "a"));
  CHECK_FALSE(FieldSelector::parse("metadata.namespace!=ns").matches("ns", "a"));
  CHECK_THROWS_AS(FieldSelector::parse("status.phase=Running"), ApiError);
  CHECK_THROWS_AS(FieldSelector::parse("metadata.name"), ApiError);
}
