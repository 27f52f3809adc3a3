/**
 * `supervise --watch`: the folders of each class's handler and middleware
 * are watched, and a change to a module there (the handler, or a module
 * beside it that it may import) replaces the children of the classes whose
 * modules live there, once the edits settle (module-reload.ts).
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { ClassConfig } from '../src/config/schema.js';

const MODULE = /\.(?:[cm]?js|[cm]?ts)$/;
/** Editors save in steps (write a temporary file, rename it): the classes are reloaded once this long has passed without another. */
const SETTLE_MS = 150;

export class ModuleWatch {
  private watchers: FSWatcher[] = [];
  private readonly edited = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  /** `onEdited`: the names of the classes a settled edit concerns. */
  constructor(private readonly onEdited: (classes: ReadonlySet<string>) => void) {}

  /** Watch the folders of these classes' modules (again, after a reload), instead of those watched before. */
  watch(classes: readonly ClassConfig[]): void {
    this.stopWatching();
    const byFolder = new Map<string, Set<string>>();
    for (const cls of classes)
      for (const file of [cls.handler, ...cls.middleware]) {
        const folder = path.dirname(file);
        byFolder.set(folder, (byFolder.get(folder) ?? new Set()).add(cls.name));
      }
    for (const [folder, names] of byFolder) {
      const watcher = watch(folder, (_event, file) => {
        if (file === null || !MODULE.test(file)) return;
        for (const name of names) this.edited.add(name);
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.settled(), SETTLE_MS);
      });
      // A folder removed or unreadable: its classes' next reload or restart says what is wrong.
      watcher.on('error', () => watcher.close());
      this.watchers.push(watcher);
    }
  }

  close(): void {
    this.stopWatching();
    clearTimeout(this.timer);
  }

  private settled(): void {
    const names = new Set(this.edited);
    this.edited.clear();
    this.onEdited(names);
  }

  private stopWatching(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }
}
