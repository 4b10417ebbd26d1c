/**
 * Names every schema of the protocol by its export name, so that reports of tolerant reading
 * (reading.ts) say `Market`, `OrderStatusEventData` or `RouteCapabilities`, not a path alone.
 * Imported once by index.ts for this effect.
 */
import * as account from './account.ts';
import * as bodies from './bodies.ts';
import * as errors from './errors.ts';
import * as frames from './frames.ts';
import * as market from './market.ts';
import * as orders from './orders.ts';
import * as primitives from './primitives.ts';
import { nameShapes } from './reading.ts';

// Resources first: a schema exported twice keeps its first name.
for (const module of [market, account, orders, frames, bodies, errors, primitives]) {
  nameShapes(module);
}
