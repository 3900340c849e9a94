// Placeholder entry of the browser player (/play); the player issue replaces this folder
// and play.html. It exists so the multi-page build has both entries from the start.
const root = document.getElementById('player');
if (root) root.textContent = 'Placard player';
