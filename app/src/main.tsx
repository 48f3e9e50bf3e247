import { render } from 'preact';
import { App } from './app.js';
import { startDashboardEarly } from './pages/dashboard.js';
import './styles.css';

// Before the first render: a dashboard's own requests need not wait for the session check.
startDashboardEarly(location.pathname, location.search);
render(<App />, document.getElementById('app')!);
