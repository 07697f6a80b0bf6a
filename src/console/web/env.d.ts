/** Stylesheets imported from scripts are bundled into the page's CSS by Bun. */
declare module "*.css";
