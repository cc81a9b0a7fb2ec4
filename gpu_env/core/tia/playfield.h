// Playfield: the 20-bit PF register and which of its bits covers each of the 160 pixels.
//
// Facts (ALE TIA.cxx): PF is stored as PF0 bits 4-7 -> bits 0-3, PF1 (MSB first) -> bits 11..4,
// PF2 (LSB first) -> bits 12..19. Each bit covers 4 pixels; the right half repeats the left half,
// or mirrors it when CTRLPF bit 0 (reflect) was set at the last mask update.
#pragma once

#include "../hd.h"

// Register bit shown by playfield cell `cell` (0..19, left to right within one half).
HD uint32_t tia_pf_cell_bit(uint32_t cell) {
  // PF0: cells 0-3 -> bits 0-3; PF1: cells 4-11 -> bits 11..4; PF2: cells 12-19 -> bits 12..19.
  return (cell >= 4 && cell < 12) ? 15 - cell : cell;
}

// 1 when the playfield covers pixel x (0..159).
HD uint32_t tia_pf_pixel(uint32_t pf, uint32_t reflect, uint32_t x) {
  uint32_t cell = x >> 2;            // 0..39
  if (cell >= 20) cell = reflect ? 39 - cell : cell - 20;
  return (pf >> tia_pf_cell_bit(cell)) & 1;
}

// All 40 cells at once: bit c (0..39) = 1 when the playfield covers pixels 4c..4c+3.
HD uint64_t tia_pf_cells(uint32_t pf, uint32_t reflect) {
  // Left half: PF0 bits 0-3 -> cells 0-3, PF1 bits 11..4 -> cells 4..11, PF2 bits 12..19 -> cells 12..19.
  uint32_t pf1 = (pf >> 4) & 0xFF;
  pf1 = ((pf1 & 0xF0) >> 4) | ((pf1 & 0x0F) << 4);
  pf1 = ((pf1 & 0xCC) >> 2) | ((pf1 & 0x33) << 2);
  pf1 = ((pf1 & 0xAA) >> 1) | ((pf1 & 0x55) << 1);
  const uint32_t left = (pf & 0xFu) | (pf1 << 4) | (pf & 0xFF000u);
  uint32_t right = left;
  if (reflect) {  // mirror the 20 cells: reverse 32 bits, keep the top 20
    uint32_t v = left;
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
    v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
    v = (v >> 16) | (v << 16);
    right = v >> 12;
  }
  return static_cast<uint64_t>(left) | (static_cast<uint64_t>(right) << 20);
}

// New PF value after a write to PF0 (0x0D), PF1 (0x0E) or PF2 (0x0F).
HD uint32_t tia_pf_write(uint32_t pf, uint8_t reg, uint8_t value) {
  switch (reg) {
    case 0x0D: return (pf & 0x000FFFF0u) | ((value >> 4) & 0x0Fu);
    case 0x0E: return (pf & 0x000FF00Fu) | (static_cast<uint32_t>(value) << 4);
    default:   return (pf & 0x00000FFFu) | (static_cast<uint32_t>(value) << 12);
  }
}
