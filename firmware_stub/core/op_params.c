/* Parameter counts of the built-in ops: part of the protocol library because the workload parser
 * checks them, while the kernels themselves live in mculab_kernels. */
#include "mculab/ops.h"

uint16_t mculab_op_param_count(uint16_t op) {
  switch (op) {
    case MCULAB_OP_CONV2D_S8:
      return MCULAB_CONV_NUM_PARAMS;
    case MCULAB_OP_FULLY_CONNECTED_S8:
      return MCULAB_FC_NUM_PARAMS;
    case MCULAB_OP_DEPTHWISE_CONV2D_S8:
      return MCULAB_DW_NUM_PARAMS;
    case MCULAB_OP_CALIBRATE:
      return MCULAB_CAL_NUM_PARAMS;
  }
  return 0;
}
