// UI preferences: theme and the token view's display mode.
import { create } from 'zustand';
import { applyTheme, initialTheme, saveTheme, type Theme } from '../lib/theme.js';

export type TokenMode = 'pieces' | 'ids';

interface UiState {
  theme: Theme;
  tokenMode: TokenMode;
  toggleTheme(): void;
  setTokenMode(mode: TokenMode): void;
}

export const useUi = create<UiState>((set, get) => ({
  theme: initialTheme(),
  tokenMode: 'pieces',
  toggleTheme() {
    const theme: Theme = get().theme === 'dark' ? 'light' : 'dark';
    applyTheme(theme);
    saveTheme(theme);
    set({ theme });
  },
  setTokenMode(tokenMode) {
    set({ tokenMode });
  },
}));
