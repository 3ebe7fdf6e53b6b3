// turndown-plugin-gfm ships no types: the plugins it exports, each a turndown plugin.
declare module 'turndown-plugin-gfm' {
  import type TurndownService from 'turndown';

  const plugins: {
    gfm: TurndownService.Plugin;
    tables: TurndownService.Plugin;
    strikethrough: TurndownService.Plugin;
    taskListItems: TurndownService.Plugin;
    highlightedCodeBlock: TurndownService.Plugin;
  };
  export default plugins;
}
