/** Action endpoints answer 200 with the JSON string "OK" (docs/management-api.md). */
export const actionDone = () => Response.json("OK");
