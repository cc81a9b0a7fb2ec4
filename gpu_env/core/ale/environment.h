// ALE's StellaEnvironment on top of the console: loadROM's power-on, reset_game, act with sticky
// actions, frame skipping, truncation, setMode programs, paddles and difficulty switches.
//
// Facts (ALE v0.12.1; the code is our own): src/ale/environment/stella_environment.cpp (reset,
// act, oneStepAct, softReset, pressSelect, emulate, noopIllegalActions, isTerminal),
// src/ale/environment/ale_state.cpp (resetKeys, applyActionPaddles, resetPaddles),
// src/ale/emucore/Console.cxx (the 60-frame display probe), System.cxx / M6532.cxx / Cart*.cxx
// (System RNG seeded 4753849: 128 RAM bytes, one timer draw per RIOT reset, 128 SC-RAM draws per
// cart reset), src/ale/ale_interface.cpp (loadROM = new console + new environment + reset).
// docs/ale_semantics.md walks through every step.
//
// All state is plain data (AleEnv, one per environment); the per-ROM constants are in AleRom. No
// heap, no STL, no exceptions: the same code runs on the CPU (native/ale_batch.cpp) and the GPU.
#pragma once

#include "../console.h"
#include "../frames.h"
#include "../games/registry.h"
#include "../hd.h"
#include "mt19937.h"

namespace gpu_env {
namespace ale {

constexpr uint32_t kSystemRandomSeed = 4753849;  // ALE setting system_random_seed (Settings.cxx)
constexpr int32_t kProbeFrames = 60;             // Console.cxx: frames run to autodetect PAL
constexpr int32_t kProbeFirstCounted = 30;       // frames 30..59 are counted
constexpr int32_t kProbePalFrames = 15;          // >= 15 long frames -> PAL
constexpr uint32_t kProbePalScanlines = 285;     // a frame "looks PAL" above this many scanlines
constexpr int32_t kNtscHeight = 210;             // default Display.Height
constexpr int32_t kPalHeight = 250;              // a PAL ROM with the default height gets 250 rows
constexpr int32_t kMinHeight = 200;              // TIA::frameReset clamps smaller heights
constexpr int32_t kResetNoopFrames = 60;         // reset(): NOOP frames after System::reset
constexpr int32_t kSoftResetFrames = 4;          // softReset(): RESET frames
constexpr int32_t kNumJoystickActions = 18;      // PLAYER_A_NOOP .. PLAYER_A_DOWNLEFTFIRE
constexpr int32_t kRamBytes = 128;
constexpr int32_t kSuperchipDraws = 128;

// setMode programs (built by gpu_env/rom_params.py from gpu_env/games.py), one int32 stream per mode:
//   kOpSelect frames | kOpSelectUntil frames max_presses(-1: none) COND | kOpSoftReset |
//   kOpHookBegin | kOpHookEnd | kOpAct action | kOpActUntil n a0..a(n-1) COND |
//   kOpActUntilChanged addr n a0..a(n-1) | kOpSelectRandomUntil base modulo then_act COND | kOpEnd
// COND = n_clauses, then per clause n_terms and n_terms x (addr, mask, value, decimal): true when any
// clause has all its terms true; a term reads RAM[addr] & mask (decimal: 10 * hi nibble + lo nibble).
enum : int32_t {
  kOpEnd = 0,
  kOpSelect = 1,
  kOpSelectUntil = 2,
  kOpSoftReset = 3,
  kOpHookBegin = 4,
  kOpHookEnd = 5,
  kOpAct = 6,
  kOpActUntil = 7,
  kOpActUntilChanged = 8,
  kOpSelectRandomUntil = 9,
};
constexpr int32_t kMaxProgramLoops = 100000;  // a guard: a condition never met ends the program

// Per-ROM constants and the environment settings shared by a batch.
struct AleRom {
  const uint8_t* rom;
  uint32_t rom_size;
  int32_t game_id;  // games/registry.h id
  uint8_t scheme;   // CartScheme
  int32_t ystart, height_prop;
  uint8_t hmove_blanks, left_paddles, right_paddles, swap_ports, swap_paddles;
  uint8_t difficulty_props;  // switch positions before any resetKeys: bit0 left A, bit1 right A
  int32_t paddle_min, paddle_max;
  int32_t default_mode;
  const int32_t* starting_actions;
  int32_t num_starting_actions;
  const int32_t* programs;  // setMode streams; AleEnv::program indexes into it (-1: none)
  // ALE settings
  int32_t frameskip;
  float repeat_action_probability;
  int32_t max_num_frames_per_episode;  // 0: no truncation
  uint8_t draw_every_frame;  // draw frames nobody observes too (frames.h; for checks and comparisons)
};

struct AleEnv {
  Console console;
  games::GameState game;
  Mt19937 system_rng;  // Stella System RNG
  Mt19937 env_rng;     // StellaEnvironment m_random (sticky actions, Adventure's select presses)
  int32_t action_a, action_b;  // m_player_a_action / m_player_b_action (B as 0..17)
  float strength_a, strength_b;
  int32_t frame_number, episode_frame_number;
  int32_t mode, difficulty;
  int32_t program;  // offset of this env's setMode stream in AleRom::programs, -1 if none
  int32_t pal;      // the probe's decision
  int32_t last_reward;
  FrameRecord frames;  // which frames the buffers hold undrawn (frames.h)
};

// Memory seen by the game logic and the setMode conditions: ALE's readRam = System::peek.
struct AleMem {
  ConsoleBus bus;
  HD uint8_t peek(uint16_t addr) { return bus.peek(addr); }
};

HD AleMem ale_mem(AleEnv& e, const AleRom& r, uint8_t* buffers) {
  return AleMem{ConsoleBus{e.console, r.rom, r.rom_size, tia_buffer(e.console.tia, buffers)}};
}

// ------------------------------------------------------------------------------------------------
// The machine.

// System::reset(): device cycle bookkeeping, RIOT (1 draw), TIA (registers and both buffers
// cleared), cartridge (SC RAM: 128 draws), then the CPU from the reset vector.
HD void ale_system_reset(AleEnv& e, const AleRom& r, uint8_t* buffers) {
  Console& c = e.console;
  console_reset_cycles(c);
  riot_reset(c.riot, mt_next(e.system_rng));
  tia_reset(c.tia, c.cycles);
  const uint32_t bytes = 2u * 160u * static_cast<uint32_t>(c.tia.height);
  for (uint32_t i = 0; i < bytes; ++i) buffers[i] = 0;
  frames_forget(e.frames);
  uint32_t draws[kSuperchipDraws];
  const int n = cart_reset_random_draws(c.cart.scheme);
  for (int i = 0; i < n; ++i) draws[i] = mt_next(e.system_rng);
  cart_reset(c.cart, n ? draws : nullptr, c.cycles);
  ConsoleBus bus{c, r.rom, r.rom_size, tia_buffer(c.tia, buffers)};
  m6502_reset_from_bus(c.cpu, bus);
}

// One TIA::update(), its picture drawn when `observed` (or when the ROM's settings draw every frame);
// frames.h says why the frames nobody observes stay exact.
HD void ale_update(AleEnv& e, const AleRom& r, uint8_t* buffers, bool observed) {
  frames_update(e.console, e.frames, r.rom, r.rom_size, buffers, observed || r.draw_every_frame != 0);
}

// Make the current buffer hold its frame's picture: before anything reads the screen.
HD void ale_observe(AleEnv& e, const AleRom& r, uint8_t* buffers) {
  frames_observe(e.console, e.frames, r.rom, r.rom_size, buffers);
}

// ALE's emulate(a, b, strength_a, strength_b, frames): inputs (resetKeys re-asserts the difficulty
// switches), one TIA::update(), RomSettings::step, per frame; then the RAM copy's bus value. The last
// frame's picture is drawn when `observed`, the others' never (ALE shows only the last one).
HD void ale_emulate(AleEnv& e, const AleRom& r, uint8_t* buffers, int32_t a, int32_t b, float sa, float sb,
                    int32_t frames, bool observed) {
  Console& c = e.console;
  for (int32_t f = 0; f < frames; ++f) {
    c.events.difficulty = static_cast<uint8_t>(e.difficulty & 3);
    console_apply_actions(c, a, b, sa, sb);
    ale_update(e, r, buffers, observed && f == frames - 1);
    AleMem mem = ale_mem(e, r, buffers);
    games::game_step(static_cast<uint16_t>(r.game_id), e.game, mem);
  }
  c.data_bus = c.riot.ram[kRamBytes - 1];
}

HD bool ale_truncated(const AleEnv& e, const AleRom& r) {
  return r.max_num_frames_per_episode > 0 && e.episode_frame_number >= r.max_num_frames_per_episode;
}

HD bool ale_terminal(const AleEnv& e) { return games::game_terminal(e.game); }

HD bool ale_game_over(const AleEnv& e, const AleRom& r) { return ale_terminal(e) || ale_truncated(e, r); }

HD int32_t ale_lives(const AleEnv& e, const AleRom& r) {
  return games::game_lives(static_cast<uint16_t>(r.game_id), e.game);
}

// oneStepAct: nothing once terminal (or truncated); RESET and illegal actions become NOOP. The frame's
// picture is drawn when `observed`.
HD int32_t ale_one_step(AleEnv& e, const AleRom& r, uint8_t* buffers, int32_t a, int32_t b, float sa, float sb,
                        bool observed) {
  if (ale_game_over(e, r)) return 0;
  const uint16_t id = static_cast<uint16_t>(r.game_id);
  if (a < kNumJoystickActions) {
    if (!games::game_is_legal(id, a)) a = kActionNoop;
  } else if (a == kActionReset) {
    a = kActionNoop;
  }
  if (b < kNumJoystickActions) {
    if (!games::game_is_legal(id, b)) b = kActionNoop;
  } else if (b == kActionReset) {
    b = kActionNoop;
  }
  ale_emulate(e, r, buffers, a, b, sa, sb, 1, observed);
  e.frame_number += 1;
  e.episode_frame_number += 1;
  return e.game.reward;
}

// StellaEnvironment::act: per skipped frame, two sticky draws (A then B; the new action is taken
// when the draw is >= p), then oneStepAct. Returns the summed reward. `observed`: someone reads the
// screen this act leaves (ALE's getScreen after act): its last frame's picture is drawn; the frames
// before it never are (frames.h keeps them exact for what reads them anyway).
HD int32_t ale_act(AleEnv& e, const AleRom& r, uint8_t* buffers, int32_t a, int32_t b, float sa, float sb,
                   bool observed) {
  const double p = static_cast<double>(r.repeat_action_probability);
  int32_t sum = 0;
  for (int32_t i = 0; i < r.frameskip; ++i) {
    if (mt_next_double(e.env_rng) >= p) {
      e.action_a = a;
      e.strength_a = sa;
    }
    if (mt_next_double(e.env_rng) >= p) {
      e.action_b = b;
      e.strength_b = sb;
    }
    sum += ale_one_step(e, r, buffers, e.action_a, e.action_b, e.strength_a, e.strength_b,
                        observed && i == r.frameskip - 1);
  }
  if (observed) ale_observe(e, r, buffers);  // a game over stops the frames before the last one
  e.last_reward = sum;
  return sum;
}

HD void ale_soft_reset(AleEnv& e, const AleRom& r, uint8_t* buffers, bool observed) {
  ale_emulate(e, r, buffers, kActionReset, kActionNoop, 1.0f, 1.0f, kSoftResetFrames, observed);
  e.action_a = kActionNoop;
  e.action_b = kActionNoop;
}

// pressSelect(n): SELECT held for n TIA updates (no RomSettings::step), then one NOOP frame.
HD void ale_press_select(AleEnv& e, const AleRom& r, uint8_t* buffers, int32_t n) {
  Console& c = e.console;
  c.events.joy[0] = c.events.joy[1] = 0;
  c.events.paddle_fire = 0;
  c.events.console_reset = 0;
  c.events.console_select = 1;
  c.events.difficulty = static_cast<uint8_t>(e.difficulty & 3);
  console_refresh_io(c);
  for (int32_t t = 0; t < n; ++t) ale_update(e, r, buffers, false);
  ale_emulate(e, r, buffers, kActionNoop, kActionNoop, 1.0f, 1.0f, 1, false);
  e.frame_number += 1;
  e.episode_frame_number += 1;
}

// ------------------------------------------------------------------------------------------------
// setMode programs.

// Evaluates COND at p; returns its value and moves p past it.
HD bool ale_condition(AleEnv& e, const AleRom& r, uint8_t* buffers, const int32_t*& p) {
  const int32_t clauses = *p++;
  bool any = false;
  for (int32_t k = 0; k < clauses; ++k) {
    const int32_t terms = *p++;
    bool all = true;
    for (int32_t t = 0; t < terms; ++t) {
      const uint16_t addr = static_cast<uint16_t>(p[0]);
      const int32_t mask = p[1], value = p[2], decimal = p[3];
      p += 4;
      AleMem mem = ale_mem(e, r, buffers);
      int32_t v = static_cast<int32_t>(mem.peek(addr)) & mask;
      if (decimal) v = 10 * (v >> 4) + (v & 0x0F);
      all = all && (v == value);
    }
    any = any || all;
  }
  return any;
}

HD void ale_run_set_mode(AleEnv& e, const AleRom& r, uint8_t* buffers) {
  if (e.program < 0 || r.programs == nullptr) return;
  const uint16_t id = static_cast<uint16_t>(r.game_id);
  const int32_t* p = r.programs + e.program;
  for (;;) {
    const int32_t op = *p++;
    switch (op) {
      case kOpSelect:
        ale_press_select(e, r, buffers, *p++);
        break;
      case kOpSelectUntil: {
        const int32_t frames = p[0], max_presses = p[1];
        p += 2;
        const int32_t* cond = p;
        int32_t presses = 0;
        for (;;) {
          const int32_t* q = cond;
          const bool done = ale_condition(e, r, buffers, q);
          p = q;
          if (done || presses >= kMaxProgramLoops || (max_presses >= 0 && presses >= max_presses)) break;
          ale_press_select(e, r, buffers, frames);
          ++presses;
        }
        break;
      }
      case kOpSoftReset:
        ale_soft_reset(e, r, buffers, false);
        break;
      case kOpHookBegin:
        games::game_set_mode_begin(id, e.game, e.mode);
        break;
      case kOpHookEnd: {
        AleMem mem = ale_mem(e, r, buffers);
        games::game_set_mode_end(id, e.game, e.mode, mem);
        break;
      }
      case kOpAct:
        ale_act(e, r, buffers, *p++, kActionNoop, 1.0f, 1.0f, false);
        break;
      case kOpActUntil: {
        const int32_t n = *p++;
        const int32_t* acts = p;
        p += n;
        const int32_t* cond = p;
        for (int32_t loops = 0;; ++loops) {
          const int32_t* q = cond;
          const bool done = ale_condition(e, r, buffers, q);
          p = q;
          if (done || loops >= kMaxProgramLoops) break;
          for (int32_t k = 0; k < n; ++k) ale_act(e, r, buffers, acts[k], kActionNoop, 1.0f, 1.0f, false);
        }
        break;
      }
      case kOpActUntilChanged: {
        const uint16_t addr = static_cast<uint16_t>(*p++);
        const int32_t n = *p++;
        const int32_t* acts = p;
        p += n;
        AleMem mem = ale_mem(e, r, buffers);
        const uint8_t before = mem.peek(addr);
        for (int32_t loops = 0; loops < kMaxProgramLoops; ++loops) {
          AleMem now = ale_mem(e, r, buffers);
          if (now.peek(addr) != before) break;
          for (int32_t k = 0; k < n; ++k) ale_act(e, r, buffers, acts[k], kActionNoop, 1.0f, 1.0f, false);
        }
        break;
      }
      case kOpSelectRandomUntil: {
        const int32_t base = p[0], modulo = p[1], then_act = p[2];
        p += 3;
        const int32_t* cond = p;
        for (int32_t loops = 0;; ++loops) {
          const int32_t* q = cond;
          const bool done = ale_condition(e, r, buffers, q);
          p = q;
          if (done || loops >= kMaxProgramLoops) break;
          const uint32_t extra = mt_next(e.env_rng) % static_cast<uint32_t>(modulo);
          ale_press_select(e, r, buffers, base + static_cast<int32_t>(extra));
          ale_act(e, r, buffers, then_act, kActionNoop, 1.0f, 1.0f, false);
        }
        break;
      }
      default:
        return;  // kOpEnd (or an unknown op: stop rather than run off the stream)
    }
  }
}

// ------------------------------------------------------------------------------------------------
// reset_game and loadROM.

// StellaEnvironment::reset(); its last frame's picture is drawn (the screen a reset leaves).
HD void ale_reset_game(AleEnv& e, const AleRom& r, uint8_t* buffers) {
  Console& c = e.console;
  e.episode_frame_number = 0;
  const int32_t mid = (c.paddle_min + c.paddle_max) / 2;  // ALEState::resetPaddles
  c.paddle[0] = c.paddle[1] = mid;
  c.events.paddle_resistance[0] = c.events.paddle_resistance[1] = mid;
  ale_system_reset(e, r, buffers);
  ale_emulate(e, r, buffers, kActionNoop, kActionNoop, 1.0f, 1.0f, kResetNoopFrames, false);
  ale_soft_reset(e, r, buffers, false);
  games::game_reset(static_cast<uint16_t>(r.game_id), e.game);
  ale_run_set_mode(e, r, buffers);
  ale_soft_reset(e, r, buffers, r.num_starting_actions == 0);
  for (int32_t i = 0; i < r.num_starting_actions; ++i) {
    ale_emulate(e, r, buffers, r.starting_actions[i], kActionNoop, 1.0f, 1.0f, 1, i == r.num_starting_actions - 1);
  }
  ale_observe(e, r, buffers);
}

// The screen height getScreen() reports for this ROM after the probe.
HD int32_t ale_screen_height(const AleRom& r, bool pal) {
  int32_t h = r.height_prop;
  if (pal && h == kNtscHeight) h = kPalHeight;
  return h < kMinHeight ? kMinHeight : h;
}

HD void ale_configure_console(Console& c, const AleRom& r, bool pal) {
  tia_configure(c.tia, r.ystart, ale_screen_height(r, pal), pal, r.hmove_blanks != 0);
}

// ALEInterface::loadROM with random_seed = seed (setMode/setDifficulty are separate calls). loadROM
// builds a new OSystem event object, a new console and a new environment, so nothing of the env's
// previous run survives: no input is held during the probe and the difficulty switches sit where the
// ROM's properties put them until the first resetKeys. The reset inside uses the ROM's default mode
// (`default_program`: its setMode stream) and difficulty 0, as a new StellaEnvironment does; ALE's
// setMode/setDifficulty after loadROM only set e.mode/e.program/e.difficulty for the next reset.
HD void ale_load_rom(AleEnv& e, const AleRom& r, uint8_t* buffers, uint32_t seed, int32_t default_program) {
  ConsoleEvents events;
  events.joy[0] = events.joy[1] = 0;
  events.paddle_fire = 0;
  events.console_reset = events.console_select = 0;
  events.difficulty = r.difficulty_props;
  for (int i = 0; i < 4; ++i) events.paddle_resistance[i] = 0;
  uint8_t* raw = reinterpret_cast<uint8_t*>(&e);
  for (uint32_t i = 0; i < sizeof(AleEnv); ++i) raw[i] = 0;
  Console& c = e.console;
  cart_init(c.cart, r.scheme);
  ale_configure_console(c, r, false);  // the probe runs before the format is known
  c.left_paddles = r.left_paddles;
  c.right_paddles = r.right_paddles;
  c.use_paddles = static_cast<uint8_t>(r.left_paddles || r.right_paddles);
  c.swap_ports = r.swap_ports;
  c.swap_paddles = r.swap_paddles;
  c.paddle_min = r.paddle_min;
  c.paddle_max = r.paddle_max;
  c.events = events;
  console_refresh_io(c);

  mt_seed(e.system_rng, kSystemRandomSeed);
  for (int i = 0; i < kRamBytes; ++i) c.riot.ram[i] = static_cast<uint8_t>(mt_next(e.system_rng));
  riot_reset(c.riot, mt_next(e.system_rng));  // the M6532 constructor's reset()

  ale_system_reset(e, r, buffers);
  int32_t pal_frames = 0;
  for (int32_t i = 0; i < kProbeFrames; ++i) {
    ale_update(e, r, buffers, false);
    if (i >= kProbeFirstCounted && tia_scanlines(c.tia, c.cycles) > kProbePalScanlines) ++pal_frames;
  }
  e.pal = pal_frames >= kProbePalFrames ? 1 : 0;
  ale_configure_console(c, r, e.pal != 0);
  ale_system_reset(e, r, buffers);

  // StellaEnvironment constructor.
  if (c.use_paddles) {
    const int32_t mid = (c.paddle_min + c.paddle_max) / 2;
    c.paddle[0] = c.paddle[1] = mid;
    c.events.paddle_resistance[0] = c.events.paddle_resistance[1] = mid;
  }
  mt_seed(e.env_rng, seed);
  e.action_a = e.action_b = kActionNoop;
  e.strength_a = e.strength_b = 1.0f;
  e.mode = r.default_mode;
  e.program = default_program;
  e.difficulty = 0;
  games::game_init(static_cast<uint16_t>(r.game_id), e.game);
  ale_reset_game(e, r, buffers);
}

}  // namespace ale
}  // namespace gpu_env
