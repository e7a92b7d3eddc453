// The headers every test file shares through tests/test_support.h, which
// includes this list; precompiled for every test executable (meson's
// cpp_pch), since they dominate a test file's compile time. Only headers
// with include guards and no using-directives belong here, so that
// including them first changes no test's meaning. An include guard, not
// #pragma once: GCC compiles this file as a main file.
#ifndef LEDGER_TESTS_PCH_TESTS_PCH_H
#define LEDGER_TESTS_PCH_TESTS_PCH_H

#include <sys/mount.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/db.h>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "ingest/value_reader.h"
#include "ledger/format.h"
#include "ledger/ledger.h"
#include "ledger/object_index.h"
#include "replay/fold/cluster_state.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/report.h"

#endif  // LEDGER_TESTS_PCH_TESTS_PCH_H
