#include <iostream>

#include "cli/commands/commands.h"
#include "cli/format.h"
#include "cli/model_submit.h"
#include "common/op_catalog.h"

namespace mculab::cli {

int CmdOps(bool describe, const std::string& describe_op) {
  if (!describe) {
    for (const auto& op : AllOps()) std::cout << op.name << "  " << op.description << "\n";
    std::cout << "(`mculab ops describe OP` lists an op's parameters)\n";
    return 0;
  }
  const OpInfo* op = FindOp(describe_op);
  if (!op) {
    std::cerr << "mculab: error: unknown op '" << describe_op << "'; built-in ops: " << OpNames()
              << "\n";
    return 2;
  }
  std::cout << RenderOpDescription(*op);
  return 0;
}

int CmdModelsInspect(const std::string& model_path, const std::vector<std::string>& model_input,
                     bool json) {
  auto text = cli::InspectModelFile(model_path, model_input, json);
  if (!text.ok()) return std::cerr << "mculab: error: " << text.error().message << "\n", 1;
  std::cout << *text;
  return 0;
}

}  // namespace mculab::cli
