// How the launcher hands rule files to the preload (rule_file.h): one
// variable per file, else the older ':'-separated RLSCOPE_RULES.
#include "format/rule_file.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/code_origin.h"

using rlscope::RuleFilesFromEnvironment;

TEST_CASE("Rule files travel one variable each so a path may hold a colon", "[rules]") {
  setenv("RLSCOPE_RULES_COUNT", "2", 1);
  setenv("RLSCOPE_RULES_0", "/a/default.rules", 1);
  setenv("RLSCOPE_RULES_1", "/runs/12:00/mine.rules", 1);
  setenv("RLSCOPE_RULES_2", "/stale/from-an-outer-run.rules", 1);
  setenv("RLSCOPE_RULES", "/ignored.rules", 1);
  CHECK(RuleFilesFromEnvironment() == std::vector<std::string>{"/a/default.rules", "/runs/12:00/mine.rules"});
  // Without the count (an environment set by hand): the older form.
  unsetenv("RLSCOPE_RULES_COUNT");
  setenv("RLSCOPE_RULES", "/x.rules:/y.rules", 1);
  CHECK(RuleFilesFromEnvironment() == std::vector<std::string>{"/x.rules", "/y.rules"});
  for (const char* name : {"RLSCOPE_RULES", "RLSCOPE_RULES_0", "RLSCOPE_RULES_1", "RLSCOPE_RULES_2"}) unsetenv(name);
  CHECK(RuleFilesFromEnvironment().empty());
}

TEST_CASE("Operation rules can ask for a class hierarchy and the user's own code", "[rules]") {
  rlscope::RuleSet rules;
  std::string error;
  REQUIRE(
      rlscope::ParseRules("operation simulation *.step class=gymnasium.*|*Env* unless-inside=simulation\n"
                          "operation forward *.[!_]* class=torch.nn.modules.module.Module user-code\n"
                          "operation replay *.add\n",
                          "test.rules", rules, &error));
  REQUIRE(rules.operations.size() == 3);
  CHECK(rules.operations[0].class_glob == "gymnasium.*|*Env*");
  CHECK_FALSE(rules.operations[0].user_code_only);
  CHECK(rules.operations[1].user_code_only);
  CHECK(rules.operations[2].class_glob.empty());

  int hierarchy_reads = 0;
  rlscope::ClassFacts facts;
  std::vector<std::string>& hierarchy = facts.hierarchy;
  auto classes = [&]() -> const rlscope::ClassFacts& {
    ++hierarchy_reads;
    return facts;
  };
  using rlscope::CodeFacts;
  using rlscope::MatchOperationRule;
  // A class named nothing like an env, derived from one: matched by what it is.
  hierarchy = {"__main__.Pole", "gymnasium.core.Env", "builtins.object"};
  CHECK(MatchOperationRule(rules.operations,
                           CodeFacts{.qualname = "Pole.step", .filename = "/home/u/train.py", .user_code = true},
                           classes) == 0);
  // The same method name on a class that is no env: no simulation.
  hierarchy = {"__main__.Counter", "builtins.object"};
  CHECK(MatchOperationRule(rules.operations,
                           CodeFacts{.qualname = "Counter.step", .filename = "/home/u/train.py", .user_code = true},
                           classes) == -1);
  // user-code: torch's own modules are not the user's forward passes.
  hierarchy = {"torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module", "builtins.object"};
  CHECK(MatchOperationRule(rules.operations,
                           CodeFacts{.qualname = "Linear.forward",
                                     .filename = "/v/site-packages/torch/nn/modules/linear.py",
                                     .module = "torch.nn.modules.linear",
                                     .user_code = false},
                           classes) == -1);
  hierarchy = {"__main__.Brain", "torch.nn.modules.module.Module", "builtins.object"};
  CHECK(MatchOperationRule(rules.operations,
                           CodeFacts{.qualname = "Brain.think", .filename = "train.py", .user_code = true},
                           classes) == 1);
  CHECK(MatchOperationRule(rules.operations,
                           CodeFacts{.qualname = "Brain.__init__", .filename = "train.py", .user_code = true},
                           classes) == -1);
  // The hierarchy is read only for rules that got that far: never for a
  // plain function that no class= rule's name matches.
  hierarchy = {};  // A function: no class.
  hierarchy_reads = 0;
  CHECK(MatchOperationRule(rules.operations, CodeFacts{.qualname = "rb.add", .filename = "train.py", .user_code = true},
                           classes) == 2);
  CHECK(MatchOperationRule(rules.operations, CodeFacts{.qualname = "helper", .filename = "train.py", .user_code = true},
                           classes) == -1);
  CHECK(hierarchy_reads == 1);  // Only "rb.add" reached a class= rule (rule 1's name glob).

  REQUIRE(
      rlscope::ParseRules("operation simulation *.step class-has=step,reset|restart\n", "has.rules", rules, &error));
  CHECK(rules.operations.back().class_has == std::vector<std::vector<std::string>>{{"step"}, {"reset", "restart"}});
  CHECK(rlscope::ClassAttributesAskedFor(rules.operations) == std::vector<std::string>{"step", "reset", "restart"});
  CHECK_FALSE(rlscope::ParseRules("operation x *.step class=\n", "bad.rules", rules, &error));
  CHECK(error.find("bad.rules:1: unknown option 'class='") == 0);
}

using rlscope::LibraryRule;
using rlscope::MatchesLocation;
using rlscope::OperationRule;
using rlscope::ParseRules;
using rlscope::RuleSet;

TEST_CASE("Library rules name packages and file names; a bare word is a path glob", "[rules]") {
  RuleSet rules;
  std::string error;
  REQUIRE(
      ParseRules("library Backend  package=torch|jax*\n"
                 "library Simulator lib=libmujoco*\n"
                 "library Native  package=torch  lib=libgomp*\n"
                 "library Simulator */my_sim/*\n"
                 "library Native  /opt/a=b/*\n"
                 "library Communication package=torch caller=torch.distributed*\n",
                 "test.rules", rules, &error));
  REQUIRE(rules.libraries.size() == 6);
  CHECK(rules.libraries[5].category == "Communication");
  CHECK(rules.libraries[5].caller_glob == "torch.distributed*");
  CHECK(rules.libraries[5].package_glob == "torch");
  CHECK(rules.libraries[0].caller_glob.empty());
  const LibraryRule& package = rules.libraries[0];
  CHECK(package.package_glob == "torch|jax*");
  CHECK(package.lib_glob.empty());
  CHECK(package.path_glob.empty());
  CHECK(rules.libraries[1].lib_glob == "libmujoco*");
  CHECK(rules.libraries[2].package_glob == "torch");
  CHECK(rules.libraries[2].lib_glob == "libgomp*");
  CHECK(rules.libraries[3].path_glob == "*/my_sim/*");
  CHECK(rules.libraries[4].path_glob == "/opt/a=b/*");
}

TEST_CASE("Library rules without a matcher, or with one twice, name the line", "[rules]") {
  for (const char* line :
       {"library Backend\n", "library Backend package=\n", "library Backend lib=a lib=b\n",
        "library Backend */a/* */b/*\n", "library Backend caller=\n", "library Backend caller=a caller=b\n"}) {
    RuleSet rules;
    std::string error;
    INFO(line);
    CHECK_FALSE(ParseRules(line, "mine.rules", rules, &error));
    CHECK(error.rfind("mine.rules:1: ", 0) == 0);
    CHECK(error.find("'library CATEGORY PATH-GLOB'") != std::string::npos);
    CHECK(rules.libraries.empty());
  }
}

TEST_CASE("module= takes a package's modules, never the user's files", "[rules]") {
  RuleSet rules;
  std::string error;
  REQUIRE(
      ParseRules("operation backprop *.step module=torch.optim.*\n"
                 "operation any *.run module=*\n"
                 "operation old *.step file=*/torch/optim/*\n",
                 "test.rules", rules, &error));
  REQUIRE(rules.operations.size() == 3);
  const OperationRule& optim = rules.operations[0];
  CHECK(optim.module_glob == "torch.optim.*");
  const char* installed = "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py";
  CHECK(MatchesLocation(optim, installed, "torch.optim.adam"));
  CHECK_FALSE(MatchesLocation(optim, installed, "torch.nn.modules"));
  // The user's project at /home/u/torch/optim/: no module, so no match;
  // the path glob of old rule files still takes it.
  CHECK_FALSE(MatchesLocation(optim, "/home/u/torch/optim/sgd.py", ""));
  CHECK_FALSE(MatchesLocation(rules.operations[1], "/home/u/train.py", ""));
  CHECK(MatchesLocation(rules.operations[2], "/home/u/torch/optim/sgd.py", ""));
  CHECK_FALSE(ParseRules("operation x *.step module=\n", "test.rules", rules, &error));
  CHECK(error.find("module=") != std::string::npos);
}

// The operation the preload would open for a function (its first matching
// rule, as SetUpCode in python_hook.cc takes it), or "" for none.
// `classes`: the method's class hierarchy ("module.qualname", own class first).
std::string DefaultOperation(const RuleSet& rules, const char* qualname, const char* filename, const char* module,
                             std::vector<std::string> hierarchy = {}, std::vector<std::string> attributes = {}) {
  const rlscope::ClassFacts classes{std::move(hierarchy), std::move(attributes)};
  const rlscope::CodeFacts facts{.qualname = qualname,
                                 .filename = filename,
                                 .module = module,
                                 .user_code = rlscope::OriginOfPath(filename).kind == rlscope::CodeOrigin::Kind::kUser};
  const int rule =
      rlscope::MatchOperationRule(rules.operations, facts, [&]() -> const rlscope::ClassFacts& { return classes; });
  return rule >= 0 ? rules.operations[static_cast<size_t>(rule)].operation : "";
}

TEST_CASE("Default operation rules take torch's and Gym's code by module, whatever the prefix", "[rules]") {
  RuleSet rules;
  std::string error;
  REQUIRE(rlscope::LoadRuleFile(RLSCOPE_DEFAULT_RULES, rules, &error));
  const char* venv = "/opt/torch/.venv/lib/python3.12/site-packages/";
  CHECK(DefaultOperation(rules, "Adam.step", (std::string(venv) + "torch/optim/adam.py").c_str(), "torch.optim.adam",
                         {"torch.optim.adam.Adam", "torch.optim.optimizer.Optimizer", "builtins.object"}) ==
        "backprop");
  CHECK(DefaultOperation(rules, "Tensor.backward", "/v/site-packages/torch/_tensor.py", "torch._tensor",
                         {"torch._tensor.Tensor", "torch._C._TensorBase", "builtins.object"}) == "backprop");
  CHECK(DefaultOperation(rules, "backward", "/v/site-packages/torch/autograd/__init__.py", "torch.autograd") ==
        "backprop");
  CHECK(DefaultOperation(rules, "TimeLimit.step", "/v/site-packages/gymnasium/wrappers/time_limit.py",
                         "gymnasium.wrappers.time_limit",
                         {"gymnasium.wrappers.time_limit.TimeLimit", "gymnasium.core.Wrapper", "gymnasium.core.Env",
                          "builtins.object"}) == "simulation");
  // The user's own folders named torch/optim or autograd are not those
  // packages: no module, so the module rules do not take them.
  CHECK(DefaultOperation(rules, "MySGD.step", "/home/u/torch/optim/my_sgd.py", "", {"my_sgd.MySGD", "builtins.object"})
            .empty());
  CHECK(DefaultOperation(rules, "backward", "/home/u/torch/autograd/__init__.py", "").empty());
  // ... but what a class is still counts: the user's optimizer derived
  // from torch's, the user's env derived from Gymnasium's.
  CHECK(DefaultOperation(rules, "MySGD.step", "/home/u/torch/optim/my_sgd.py", "",
                         {"my_sgd.MySGD", "torch.optim.optimizer.Optimizer", "builtins.object"}) == "backprop");
  CHECK(DefaultOperation(rules, "Pole.step", "/home/u/gym/pole.py", "",
                         {"pole.Pole", "gymnasium.core.Env", "builtins.object"}) == "simulation");
  // An env by the Gym API alone, a buffer by storing and sampling, however
  // they are named; the same names without the API are nothing.
  CHECK(DefaultOperation(rules, "SwingTask.step", "/home/u/train.py", "", {"__main__.SwingTask", "builtins.object"},
                         {"step", "reset"}) == "simulation");
  CHECK(
      DefaultOperation(rules, "Counter.step", "/home/u/train.py", "", {"__main__.Counter", "builtins.object"}, {"step"})
          .empty());
  CHECK(DefaultOperation(rules, "TransitionStash.put", "/home/u/train.py", "",
                         {"__main__.TransitionStash", "builtins.object"}, {"draw", "put"}) == "replay");
  CHECK(DefaultOperation(rules, "Canvas.put", "/home/u/train.py", "", {"__main__.Canvas", "builtins.object"}, {"put"})
            .empty());
  // Gymnasium's vector envs from a source tree: by class name alone.
  CHECK(DefaultOperation(rules, "SyncVectorEnv.step", "/src/Gymnasium/gymnasium/vector/sync_vector_env.py", "") ==
        "simulation");
  CHECK(DefaultOperation(rules, "AsyncVectorEnv.step_wait", "/src/Gymnasium/gymnasium/vector/async_vector_env.py",
                         "") == "simulation");
  // A reset is the reserved env_reset (simulation that starts an episode).
  CHECK(DefaultOperation(rules, "AsyncVectorEnv.reset_wait", "/src/Gymnasium/gymnasium/vector/async_vector_env.py",
                         "") == "env_reset");
  CHECK(DefaultOperation(rules, "SwingTask.reset", "/home/u/train.py", "", {"__main__.SwingTask", "builtins.object"},
                         {"step", "reset"}) == "env_reset");
}
