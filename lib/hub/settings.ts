/**
 * Where the Hugging Face Hub is and how to reach it, as huggingface_hub derives it from the
 * environment, and what a Hub id looks like.
 *
 *   HF_ENDPOINT     default https://huggingface.co
 *   HF_HUB_CACHE    else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub
 *   HF_HUB_OFFLINE  1/true/yes/on: never touch the network, resolve from the cache only
 *   HF_TOKEN        else the file $HF_TOKEN_PATH, else $HF_HOME/token; sent as `Authorization: Bearer`
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const DEFAULT_ENDPOINT = 'https://huggingface.co';

export interface HubSettings {
  endpoint: string;
  cacheDir: string;
  offline: boolean;
  token?: string;
}


function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

function isTrue(v: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p;
}

/** The settings huggingface_hub would derive from this environment. */
export function hubSettings(env: NodeJS.ProcessEnv = process.env): HubSettings {
  const xdg = nonEmpty(env.XDG_CACHE_HOME);
  const hfHome = expandHome(nonEmpty(env.HF_HOME) ?? join(xdg ?? join(homedir(), '.cache'), 'huggingface'));
  const cacheDir = expandHome(nonEmpty(env.HF_HUB_CACHE) ?? join(hfHome, 'hub'));
  const endpoint = (nonEmpty(env.HF_ENDPOINT) ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  let token = nonEmpty(env.HF_TOKEN) ?? nonEmpty(env.HUGGING_FACE_HUB_TOKEN);
  if (token === undefined) {
    const tokenFile = expandHome(nonEmpty(env.HF_TOKEN_PATH) ?? join(hfHome, 'token'));
    try {
      token = nonEmpty(readFileSync(tokenFile, 'utf8'));
    } catch {
      /* no token file: anonymous access */
    }
  }
  return { endpoint, cacheDir, offline: isTrue(env.HF_HUB_OFFLINE), token };
}

// One path part of a Hub id: word characters at both ends, '.', '-' inside (huggingface_hub's rule).
const ID_PART = /^\w(?:[\w.-]*\w)?$/;

export function hubIdShaped(s: string): boolean {
  const parts = s.split('/');
  return (
    s.length > 0 &&
    s.length <= 96 &&
    parts.length <= 2 &&
    parts.every((p) => ID_PART.test(p)) &&
    !s.includes('--') &&
    !s.includes('..')
  );
}

/** True when `s` looks like a Hub id ("org/name" or "name") and is not an existing local path. */
export function isHubId(s: string): boolean {
  return hubIdShaped(s) && !existsSync(s);
}
