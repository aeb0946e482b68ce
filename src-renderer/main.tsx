// Entry point: apply the saved theme before the first paint, then mount the app.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { applyTheme, initialTheme } from './lib/theme.js';
import './styles/base.css';
import './styles/layout.css';
import './styles/components.css';
import './styles/tokens.css';
import './styles/views.css';
import './styles/workbench.css';

applyTheme(initialTheme());

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
