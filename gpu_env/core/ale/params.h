// The int32 parameter block that describes a ROM and its ALE settings to the environment layer.
// One layout for the CPU entry points (native/ale_batch.cpp) and the CUDA kernels (cuda/kernels.h);
// gpu_env/rom_params.py builds it in this order, for gpu_env/backends/native.py and gpu_env/backends/cuda/backend.py.
#pragma once

#include "../hd.h"
#include "environment.h"

namespace gpu_env {
namespace ale {

enum : int {
  kParamGameId,
  kParamScheme,
  kParamYStart,
  kParamHeightProp,
  kParamHmoveBlanks,
  kParamLeftPaddles,
  kParamRightPaddles,
  kParamSwapPorts,
  kParamSwapPaddles,
  kParamDifficultyProps,
  kParamPaddleMin,
  kParamPaddleMax,
  kParamDefaultMode,
  kParamFrameskip,
  kParamMaxFrames,
  kParamDrawEveryFrame,
  kParamCount,
};

// An AleRom from the parameter block plus what is not an int32 setting: the ROM image, the
// starting actions, the setMode streams and the sticky-action probability.
HD AleRom rom_from_params(const int32_t* params, const uint8_t* rom, uint32_t rom_size, const int32_t* starting,
                          int32_t num_starting, const int32_t* programs, float repeat_action_probability) {
  AleRom r;
  r.rom = rom;
  r.rom_size = rom_size;
  r.game_id = params[kParamGameId];
  r.scheme = static_cast<uint8_t>(params[kParamScheme]);
  r.ystart = params[kParamYStart];
  r.height_prop = params[kParamHeightProp];
  r.hmove_blanks = static_cast<uint8_t>(params[kParamHmoveBlanks]);
  r.left_paddles = static_cast<uint8_t>(params[kParamLeftPaddles]);
  r.right_paddles = static_cast<uint8_t>(params[kParamRightPaddles]);
  r.swap_ports = static_cast<uint8_t>(params[kParamSwapPorts]);
  r.swap_paddles = static_cast<uint8_t>(params[kParamSwapPaddles]);
  r.difficulty_props = static_cast<uint8_t>(params[kParamDifficultyProps]);
  r.paddle_min = params[kParamPaddleMin];
  r.paddle_max = params[kParamPaddleMax];
  r.default_mode = params[kParamDefaultMode];
  r.starting_actions = starting;
  r.num_starting_actions = num_starting;
  r.programs = programs;
  r.frameskip = params[kParamFrameskip];
  r.repeat_action_probability = repeat_action_probability;
  r.max_num_frames_per_episode = params[kParamMaxFrames];
  r.draw_every_frame = static_cast<uint8_t>(params[kParamDrawEveryFrame] != 0);
  return r;
}

}  // namespace ale
}  // namespace gpu_env
