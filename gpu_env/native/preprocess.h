// AtariPreprocessing's observation of one frame (max-pool of the last two screens, then the resize of
// cv2.INTER_AREA), defined in preprocess.cpp: the batched entry point there and the fused step of
// ale_batch.cpp call the same function, so both produce the same bytes.
#pragma once

#include <cstdint>

namespace gpu_env_native {

// One axis of the general resize: tap j of output pixel d reads source index[j * dst + d] with
// float32 weight weight[j * dst + d] (gpu_env/preprocess.py tap_arrays).
struct ResizeTaps {
  const int32_t* index;
  const float* weight;
  int32_t k;
};

struct ObserveSpec {
  int32_t src_h, src_w, channels;  // the screens: [src_h][src_w][channels] bytes
  int32_t dst_h, dst_w;            // the observation
  bool integer_path;               // both scale factors are integers (the tap tables are not read)
  ResizeTaps x, y;
};

// frame = max(frame, other) in place when `other` is not null, then out = INTER_AREA resize of frame.
void observe_frame(const ObserveSpec& spec, uint8_t* frame, const uint8_t* other, uint8_t* out);

}  // namespace gpu_env_native
