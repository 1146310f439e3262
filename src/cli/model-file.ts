/** Reading a cost model JSON file named by a CLI option (vcoll estimate --truth, vcoll tree --model-file). */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from '../errors.js';
import { loadModelJson, type LoadedModel } from '../model/model-json.js';

/** The model in `path`; errors name the JSON path of a bad field and the file, or the option if unreadable. */
export function readModelFile(path: string, option: string): LoadedModel {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(option, `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return loadModelJson(text);
  } catch (e) {
    if (e instanceof InvalidArgumentError) {
      throw new InvalidArgumentError(e.field, `${e.detail} (in ${option} ${path})`);
    }
    throw e;
  }
}

