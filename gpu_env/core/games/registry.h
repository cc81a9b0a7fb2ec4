// Game registry: one id per ROM ALE plays single-player, and the dispatch of ALE's RomSettings
// calls on that id (a switch, so the same code runs on the host and, through NVRTC, on the device).
//
// Ids are the positions of the ROM ids in sorted order; gpu_env.games.games() lists them in the
// same order.
// Call order, as ALE's StellaEnvironment does it (src/ale/environment/stella_environment.cpp):
//   - game_init once when the ROM is loaded (a freshly constructed RomSettings: zeros + reset());
//   - game_step after EVERY emulated frame (reset_game's NOOP/RESET/select/starting-action frames
//     included; not during the pressSelect frames run with SELECT held, only after its NOOP frame);
//   - game_reset inside reset_game, after the first soft reset (before setMode);
//   - game_set_mode_begin / game_set_mode_end around the select presses of setMode;
//   - reward of a frame = GameState::reward after its step; game over = GameState::terminal;
//     ALE's lives() = game_lives.
#pragma once

#include "game_state.h"
#include "adventure.h"
#include "air_raid.h"
#include "alien.h"
#include "amidar.h"
#include "assault.h"
#include "asterix.h"
#include "asteroids.h"
#include "atlantis.h"
#include "atlantis2.h"
#include "backgammon.h"
#include "bank_heist.h"
#include "basic_math.h"
#include "battle_zone.h"
#include "beam_rider.h"
#include "berzerk.h"
#include "blackjack.h"
#include "bowling.h"
#include "boxing.h"
#include "breakout.h"
#include "carnival.h"
#include "casino.h"
#include "centipede.h"
#include "chopper_command.h"
#include "crazy_climber.h"
#include "crossbow.h"
#include "darkchambers.h"
#include "defender.h"
#include "demon_attack.h"
#include "donkey_kong.h"
#include "double_dunk.h"
#include "earthworld.h"
#include "elevator_action.h"
#include "enduro.h"
#include "entombed.h"
#include "et.h"
#include "fishing_derby.h"
#include "flag_capture.h"
#include "freeway.h"
#include "frogger.h"
#include "frostbite.h"
#include "galaxian.h"
#include "gopher.h"
#include "gravitar.h"
#include "hangman.h"
#include "haunted_house.h"
#include "hero.h"
#include "human_cannonball.h"
#include "ice_hockey.h"
#include "jamesbond.h"
#include "journey_escape.h"
#include "kaboom.h"
#include "kangaroo.h"
#include "keystone_kapers.h"
#include "king_kong.h"
#include "klax.h"
#include "koolaid.h"
#include "krull.h"
#include "kung_fu_master.h"
#include "laser_gates.h"
#include "lost_luggage.h"
#include "mario_bros.h"
#include "miniature_golf.h"
#include "montezuma_revenge.h"
#include "mr_do.h"
#include "ms_pacman.h"
#include "name_this_game.h"
#include "othello.h"
#include "pacman.h"
#include "phoenix.h"
#include "pitfall.h"
#include "pitfall2.h"
#include "pong.h"
#include "pooyan.h"
#include "private_eye.h"
#include "qbert.h"
#include "riverraid.h"
#include "road_runner.h"
#include "robotank.h"
#include "seaquest.h"
#include "sir_lancelot.h"
#include "skiing.h"
#include "solaris.h"
#include "space_invaders.h"
#include "space_war.h"
#include "star_gunner.h"
#include "superman.h"
#include "surround.h"
#include "tennis.h"
#include "tetris.h"
#include "tic_tac_toe_3d.h"
#include "time_pilot.h"
#include "trondead.h"
#include "turmoil.h"
#include "tutankham.h"
#include "up_n_down.h"
#include "venture.h"
#include "video_checkers.h"
#include "video_chess.h"
#include "video_cube.h"
#include "video_pinball.h"
#include "wizard_of_wor.h"
#include "word_zapper.h"
#include "yars_revenge.h"
#include "zaxxon.h"

namespace gpu_env {
namespace games {

constexpr uint16_t kNumGames = 104;

// Ids of the games with extra hooks below.
constexpr uint16_t kAlienId = 2;
constexpr uint16_t kDemonAttackId = 27;
constexpr uint16_t kGravitarId = 42;
constexpr uint16_t kLostLuggageId = 59;
constexpr uint16_t kSkiingId = 80;
constexpr uint16_t kVideoCheckersId = 96;
constexpr uint16_t kVideoCubeId = 98;

// X(id, namespace) for every game.
#define GPU_ENV_GAME_LIST(X) \
  X(0, adventure) \
  X(1, air_raid) \
  X(2, alien) \
  X(3, amidar) \
  X(4, assault) \
  X(5, asterix) \
  X(6, asteroids) \
  X(7, atlantis) \
  X(8, atlantis2) \
  X(9, backgammon) \
  X(10, bank_heist) \
  X(11, basic_math) \
  X(12, battle_zone) \
  X(13, beam_rider) \
  X(14, berzerk) \
  X(15, blackjack) \
  X(16, bowling) \
  X(17, boxing) \
  X(18, breakout) \
  X(19, carnival) \
  X(20, casino) \
  X(21, centipede) \
  X(22, chopper_command) \
  X(23, crazy_climber) \
  X(24, crossbow) \
  X(25, darkchambers) \
  X(26, defender) \
  X(27, demon_attack) \
  X(28, donkey_kong) \
  X(29, double_dunk) \
  X(30, earthworld) \
  X(31, elevator_action) \
  X(32, enduro) \
  X(33, entombed) \
  X(34, et) \
  X(35, fishing_derby) \
  X(36, flag_capture) \
  X(37, freeway) \
  X(38, frogger) \
  X(39, frostbite) \
  X(40, galaxian) \
  X(41, gopher) \
  X(42, gravitar) \
  X(43, hangman) \
  X(44, haunted_house) \
  X(45, hero) \
  X(46, human_cannonball) \
  X(47, ice_hockey) \
  X(48, jamesbond) \
  X(49, journey_escape) \
  X(50, kaboom) \
  X(51, kangaroo) \
  X(52, keystone_kapers) \
  X(53, king_kong) \
  X(54, klax) \
  X(55, koolaid) \
  X(56, krull) \
  X(57, kung_fu_master) \
  X(58, laser_gates) \
  X(59, lost_luggage) \
  X(60, mario_bros) \
  X(61, miniature_golf) \
  X(62, montezuma_revenge) \
  X(63, mr_do) \
  X(64, ms_pacman) \
  X(65, name_this_game) \
  X(66, othello) \
  X(67, pacman) \
  X(68, phoenix) \
  X(69, pitfall) \
  X(70, pitfall2) \
  X(71, pong) \
  X(72, pooyan) \
  X(73, private_eye) \
  X(74, qbert) \
  X(75, riverraid) \
  X(76, road_runner) \
  X(77, robotank) \
  X(78, seaquest) \
  X(79, sir_lancelot) \
  X(80, skiing) \
  X(81, solaris) \
  X(82, space_invaders) \
  X(83, space_war) \
  X(84, star_gunner) \
  X(85, superman) \
  X(86, surround) \
  X(87, tennis) \
  X(88, tetris) \
  X(89, tic_tac_toe_3d) \
  X(90, time_pilot) \
  X(91, trondead) \
  X(92, turmoil) \
  X(93, tutankham) \
  X(94, up_n_down) \
  X(95, venture) \
  X(96, video_checkers) \
  X(97, video_chess) \
  X(98, video_cube) \
  X(99, video_pinball) \
  X(100, wizard_of_wor) \
  X(101, word_zapper) \
  X(102, yars_revenge) \
  X(103, zaxxon)

// A freshly constructed RomSettings: every word zero, then the game's reset().
HD void game_init(uint16_t id, GameState& g) {
  game_state_zero(g);
  switch (id) {
#define GPU_ENV_GAME_CASE(ID, NS) \
  case ID:                        \
    NS::reset(g);                 \
    break;
    GPU_ENV_GAME_LIST(GPU_ENV_GAME_CASE)
#undef GPU_ENV_GAME_CASE
    default:
      break;
  }
}

// RomSettings::reset(): clears what ALE clears; counters ALE keeps (e.g. set by setMode) stay.
HD void game_reset(uint16_t id, GameState& g) {
  switch (id) {
#define GPU_ENV_GAME_CASE(ID, NS) \
  case ID:                        \
    NS::reset(g);                 \
    break;
    GPU_ENV_GAME_LIST(GPU_ENV_GAME_CASE)
#undef GPU_ENV_GAME_CASE
    default:
      break;
  }
}

// RomSettings::step() after one emulated frame: updates reward, score, lives, terminal.
template <class Mem>
HD void game_step(uint16_t id, GameState& g, Mem& m) {
  switch (id) {
#define GPU_ENV_GAME_CASE(ID, NS) \
  case ID:                        \
    NS::step(g, m);               \
    break;
    GPU_ENV_GAME_LIST(GPU_ENV_GAME_CASE)
#undef GPU_ENV_GAME_CASE
    default:
      break;
  }
}

// RomSettings::lives(): what ALEInterface::lives() returns.
HD int32_t game_lives(uint16_t id, const GameState& g) {
  switch (id) {
#define GPU_ENV_GAME_CASE(ID, NS) \
  case ID:                        \
    return NS::lives(g);
    GPU_ENV_GAME_LIST(GPU_ENV_GAME_CASE)
#undef GPU_ENV_GAME_CASE
    default:
      return 0;
  }
}

// RomSettings::isTerminal().
HD bool game_terminal(const GameState& g) { return g.terminal != 0; }

// RomSettings::isLegal(action) for the 18 player-A actions (0..17); ALE plays NOOP instead of an
// illegal action. Only Lost Luggage and Skiing forbid actions (every FIRE action).
HD bool game_is_legal(uint16_t id, int action) {
  if (id == kLostLuggageId) return lost_luggage::is_legal(action);
  if (id == kSkiingId) return skiing::is_legal(action);
  return true;
}

// Side effects of setMode on the settings, before the select presses (mode = requested mode).
HD void game_set_mode_begin(uint16_t id, GameState& g, int32_t mode) {
  if (id == kVideoCheckersId) video_checkers::set_mode_begin(g, mode);
  if (id == kVideoCubeId) video_cube::set_mode_begin(g, mode);
}

// Side effects of setMode on the settings, after the select presses and before its soft reset.
template <class Mem>
HD void game_set_mode_end(uint16_t id, GameState& g, int32_t mode, Mem& m) {
  if (id == kAlienId) alien::set_mode_end(g, mode, m);
  if (id == kDemonAttackId) demon_attack::set_mode_end(g, mode, m);
  if (id == kGravitarId) gravitar::set_mode_end(g, mode, m);
}

}  // namespace games
}  // namespace gpu_env
