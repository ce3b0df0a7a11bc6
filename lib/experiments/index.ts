/** The experiments of the papers as data: the training tasks (./tasks.ts). */
export { TASK_NAMES, task, allTasks, type TaskName, type TaskDefinition, type TaskData } from './tasks.js';
