// First: its requests leave before the rest of the app is evaluated (start.ts).
import './start.js';
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

render(<App />, document.getElementById('app')!);
