// The ring-following client: RingClient, its errors and helpers.

export { BoundedLoad } from './bounded.js';
export { RingClient } from './client.js';
export {
  ApiError,
  ClosedError,
  ForbiddenError,
  InvalidOptionError,
  MalformedError,
  RingdError,
  RingNotFoundError,
  SnapshotRefusedError,
  UnauthorizedError,
  UnreachableError,
  WaitError,
} from './errors.js';
export { RingEvent } from './state.js';
export { RingView } from './view.js';
