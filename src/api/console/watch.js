// The two watch streams the console follows. Versions arrive as events;
// everything else (nodes, ownership, history) is refetched on each one.

import { openStream } from "./sse.js";
import { ringPath } from "./api.js";

const live = new Set();

function track(stream) {
  live.add(stream);
  return {
    close() {
      live.delete(stream);
      stream.close();
    },
    restart: () => stream.restart(),
  };
}

// A new token must reach the open streams too.
export function restartAll() {
  for (const s of live) s.restart();
}

// One ring: light snapshots (the page refetches what it shows), rollout
// events for the editor's rollout panel, health events for the node table.
export function watchRing(ring, handlers) {
  const url = ringPath(ring, "/watch?mode=light&rollouts=true&health=true");
  return track(openStream(url, {
    onState: handlers.onState || (() => {}),
    onEvent(type, data) {
      if ((type === "snapshot" || type === "reset" || type === "keepalive") && data) {
        handlers.onVersion && handlers.onVersion(Number(data.version), data, type);
      } else if (type === "deleted") {
        handlers.onDeleted && handlers.onDeleted(data);
      } else if (type === "rollout") {
        handlers.onRollout && handlers.onRollout(data);
      } else if (type === "health") {
        handlers.onHealth && handlers.onHealth(data);
      }
    },
  }));
}

// Every ring: one `ring` event per ring on connect, then one per version.
export function watchAllRings(handlers) {
  return track(openStream("/v1/watch", {
    onState: handlers.onState || (() => {}),
    onEvent(type, data) {
      if (type === "ring" && data) handlers.onRing(data.ring, Number(data.version));
      else if (type === "deleted" && data) handlers.onDeleted(data.ring);
    },
  }));
}
