// The Vite entry of the browser player (play.html); the page lives in app.ts.
import './app.js';
