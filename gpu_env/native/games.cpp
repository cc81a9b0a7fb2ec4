// C entry points for running the per-game logic (gpu_env/core/games) over recorded RAM, so it can
// be checked frame by frame against ale-py without the emulator.
#include "games/registry.h"

#define GPU_ENV_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gpu_env::games::GameState;
using gpu_env::games::kGameStateWords;

constexpr int kTraceMemBytes = 256;    // per frame: RIOT RAM 0x80..0xFF, then 128 B of cart RAM
constexpr int kRiotBytes = 128;
constexpr uint16_t kCartReadPort = 0x1080;  // SC carts: RAM read port 0x1080..0x10FF (13-bit)

constexpr int32_t kOpLoad = 1;   // replace the state with loads[t] before anything else
constexpr int32_t kOpReset = 2;  // RomSettings::reset()
constexpr int32_t kOpStep = 4;   // RomSettings::step() on this frame's memory

// One recorded frame seen through the bus: RIOT RAM and the SC cartridge RAM read port.
struct TraceMem {
  const uint8_t* bytes;
  uint8_t peek(uint16_t addr) const {
    const uint16_t a = addr & 0x1FFF;
    if ((a & 0x1000) == 0 && (a & 0x0280) == 0x0080) return bytes[a & 0x7F];
    if ((a & 0x1F80) == kCartReadPort) return bytes[kRiotBytes + (a & 0x7F)];
    return 0;
  }
};

void to_words(const GameState& g, int32_t* w) {
  w[0] = g.reward;
  w[1] = g.score;
  w[2] = g.lives;
  w[3] = g.terminal;
  for (int i = 0; i < gpu_env::games::kGameExtraWords; ++i) w[4 + i] = g.extra[i];
}

void from_words(const int32_t* w, GameState& g) {
  g.reward = w[0];
  g.score = w[1];
  g.lives = w[2];
  g.terminal = w[3];
  for (int i = 0; i < gpu_env::games::kGameExtraWords; ++i) g.extra[i] = w[4 + i];
}

}  // namespace

GPU_ENV_EXPORT int gpu_env_games_count() { return gpu_env::games::kNumGames; }

GPU_ENV_EXPORT int gpu_env_games_state_words() { return kGameStateWords; }

GPU_ENV_EXPORT int gpu_env_games_trace_mem_bytes() { return kTraceMemBytes; }

// A freshly constructed RomSettings of game_id into state[kGameStateWords]. Returns 0, or -1 for a
// bad id.
GPU_ENV_EXPORT int gpu_env_games_init(int game_id, int32_t* state) {
  if (game_id < 0 || game_id >= gpu_env::games::kNumGames) return -1;
  GameState g;
  gpu_env::games::game_init(static_cast<uint16_t>(game_id), g);
  to_words(g, state);
  return 0;
}

// ALE's isLegal(action) for action 0..17: 1 legal, 0 illegal, -1 bad id.
GPU_ENV_EXPORT int gpu_env_games_is_legal(int game_id, int action) {
  if (game_id < 0 || game_id >= gpu_env::games::kNumGames) return -1;
  return gpu_env::games::game_is_legal(static_cast<uint16_t>(game_id), action) ? 1 : 0;
}

// Runs the game logic over n_frames recorded frames.
//   mem:    uint8[n_frames, 256]  RIOT RAM (getRAM) then SC cart RAM (zeros for other carts)
//   ops:    int32[n_frames]       bit set of kOpLoad (1), kOpReset (2), kOpStep (4), applied in
//                                 that order
//   loads:  int32[n_frames, 12]   states for kOpLoad (may be null if no op loads)
//   state:  int32[12]             the state to start from; holds the final state on return
//   out:    int32[n_frames, 3]    per frame after its ops: reward, terminal, ALE lives()
//   states: int32[n_frames, 12]   per frame state after its ops (may be null)
// Returns 0, or -1 for a bad id / null buffer.
GPU_ENV_EXPORT int gpu_env_games_run_trace(int game_id, int n_frames, const uint8_t* mem,
                                           const int32_t* ops, const int32_t* loads,
                                           int32_t* state, int32_t* out, int32_t* states) {
  if (game_id < 0 || game_id >= gpu_env::games::kNumGames) return -1;
  if (n_frames < 0 || mem == nullptr || ops == nullptr || state == nullptr || out == nullptr) {
    return -1;
  }
  const uint16_t id = static_cast<uint16_t>(game_id);
  GameState g;
  from_words(state, g);
  for (int t = 0; t < n_frames; ++t) {
    const int32_t op = ops[t];
    if (op & kOpLoad) {
      if (loads == nullptr) return -1;
      from_words(loads + static_cast<long>(t) * kGameStateWords, g);
    }
    if (op & kOpReset) gpu_env::games::game_reset(id, g);
    if (op & kOpStep) {
      TraceMem m{mem + static_cast<long>(t) * kTraceMemBytes};
      gpu_env::games::game_step(id, g, m);
    }
    int32_t* o = out + static_cast<long>(t) * 3;
    o[0] = g.reward;
    o[1] = g.terminal;
    o[2] = gpu_env::games::game_lives(id, g);
    if (states != nullptr) to_words(g, states + static_cast<long>(t) * kGameStateWords);
  }
  to_words(g, state);
  return 0;
}
