// First: its requests leave before the rest of the app is evaluated (start.ts).
import './start.js';
import { render } from 'preact';
import { App } from './app.js';
import { preloadPage } from './pages.js';
// The chart's stylesheet with the app's: in the dashboard's chunk, it would be one more file to wait for.
import 'uplot/dist/uPlot.min.css';
import './styles.css';

// The opened page's code loads beside the session check, not after it (`pages.tsx`).
preloadPage(location.pathname);
render(<App />, document.getElementById('app')!);
